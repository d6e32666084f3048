/**
 * `herald listen`: this machine as a `stream` device. Registers it on first use (with a pairing
 * code minted by the signed-in CLI), prints notifications as they arrive or runs a command with
 * each one as JSON on standard input, acknowledges them, and reconnects with backoff, catching up
 * from the last one it saw.
 */
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../../gen/herald/v1/inbox_service_pb.ts";
import { type Notification, NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { HeraldError } from "../../sdk/errors.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";

async function ensureDevice(
  ctx: Context,
): Promise<{ id: string; credential: string; cursor?: string }> {
  const saved = ctx.config.load().device;
  if (saved) return saved;
  const devices = ctx.client(DeviceService);
  const { code } = await devices.createPairingCode({}, { headers: ctx.headers(ctx.ownerToken) });
  const signedIn = await devices.signInDevice({
    method: { case: "pairingCode", value: code },
    name: `${hostname()} (herald listen)`,
    platform: "stream",
  });
  const device = { id: signedIn.device?.id as string, credential: signedIn.deviceCredential };
  ctx.config.update((c) => ({ ...c, device }));
  ctx.io.stderr(`registered this machine as device ${device.id}\n`);
  return device;
}

function runExec(
  cmd: string,
  json: string,
  env: Record<string, string | undefined>,
): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, {
      shell: true,
      stdio: ["pipe", "inherit", "inherit"],
      env: env as NodeJS.ProcessEnv,
    });
    child.stdin.end(json);
    child.on("close", (code) => resolve(code ?? 1));
    child.on("error", () => resolve(127));
  });
}

/** Reconnecting waits at most this long, so a restarted server is heard from within seconds. */
const maxBackoffMs = 5_000;

/**
 * How a notification reads in a terminal: time, priority (high stands out), topic and title on
 * one line; the message indented below; then the link.
 */
export function formatNotification(n: Notification, color: boolean): string {
  const time = (n.createdAt ? timestampDate(n.createdAt) : new Date()).toTimeString().slice(0, 8);
  const high = n.priority === "high";
  const mark = high
    ? color
      ? "\x1b[1;31mHIGH\x1b[0m"
      : "HIGH"
    : n.priority === "low"
      ? "low "
      : "    ";
  const title = high && color ? `\x1b[1m${n.title}\x1b[0m` : n.title;
  const pad = " ".repeat(10);
  const lines = [`${time}  ${mark}  #${n.topic}  ${title}`];
  for (const line of n.message ? n.message.split("\n") : []) lines.push(`${pad}${line}`);
  if (n.clickUrl) lines.push(`${pad}→ ${n.clickUrl}`);
  return `${lines.join("\n")}\n`;
}

/** A desktop notification where the system has a way to show one (notify-send, osascript). */
function desktopNotify(n: Notification, env: Record<string, string | undefined>): void {
  const [cmd, args] =
    process.platform === "darwin"
      ? [
          "osascript",
          [
            "-e",
            `display notification ${JSON.stringify(n.message)} with title ${JSON.stringify(n.title)}`,
          ],
        ]
      : ["notify-send", [...(n.priority === "high" ? ["-u", "critical"] : []), n.title, n.message]];
  const child = spawn(cmd, args as string[], { stdio: "ignore", env: env as NodeJS.ProcessEnv });
  child.on("error", () => {}); // not installed: the terminal line is enough
}

/**
 * How `listen` shows what arrives: printed, as NDJSON, or run through `--exec`; a notification
 * awaiting acknowledgement is acknowledged with the `a` key on a terminal, and a clear (it was
 * acknowledged, here or elsewhere) is said.
 */
function presenter(
  ctx: Context,
  values: Record<string, unknown>,
  deviceId: string,
  acknowledge: (id: string) => Promise<unknown>,
) {
  const exec = typeof values.exec === "string" ? values.exec : undefined;
  let waiting: Notification | undefined;
  const stopKeys =
    exec === undefined && !ctx.flags.json
      ? ctx.io.onKey?.((key) => {
          if (key !== "a" || !waiting) return;
          const n = waiting;
          waiting = undefined;
          acknowledge(n.id).catch((err: unknown) => {
            ctx.io.stderr(`acknowledging failed: ${HeraldError.from(err).message}\n`);
          });
        })
      : undefined;
  return {
    async notification(n: Notification) {
      const json = JSON.stringify(toJson(NotificationSchema, n, { useProtoFieldName: true }));
      if (exec !== undefined) await runExec(exec, json, ctx.io.env);
      else if (ctx.flags.json)
        ctx.io.stdout(`${json}\n`); // NDJSON: one object per line
      else ctx.io.stdout(`${values.bell ? "\x07" : ""}${formatNotification(n, ctx.io.isTty)}`);
      if (values.desktop) desktopNotify(n, ctx.io.env);
      if (n.requireAck && !n.acknowledgedAt) {
        waiting = n;
        if (stopKeys) ctx.io.stdout("  needs acknowledgement: press a\n");
      }
    },
    cleared({ id, byDeviceId }: { id: string; byDeviceId: string }) {
      if (id === waiting?.id) waiting = undefined;
      if (ctx.flags.json) {
        ctx.io.stdout(`${JSON.stringify({ cleared: { id, by_device_id: byDeviceId } })}\n`);
      } else if (exec === undefined) {
        const where = byDeviceId === deviceId ? "here" : `on device ${byDeviceId}`;
        ctx.io.stdout(`  ✓ acknowledged ${where}: ${id}\n`);
      }
    },
    stop: () => stopKeys?.(),
  };
}

export const listen: Command = {
  name: "listen",
  summary: "receive notifications live on this machine (a stream device)",
  usage: "herald listen [--topic T …] [--exec CMD] [--count N] [--bell] [--desktop] [--json]",
  options: {
    topic: { type: "string", multiple: true },
    exec: { type: "string" },
    count: { type: "string" },
    bell: { type: "boolean" },
    desktop: { type: "boolean" },
  },
  async run(ctx, { values }) {
    const device = await ensureDevice(ctx);
    const auth = { headers: { authorization: `Bearer ${device.credential}` } };
    const topics = values.topic as string[] | undefined;
    if (topics) await ctx.client(DeviceService).setTopicFilter({ topics }, auth);
    const limit = values.count === undefined ? Number.POSITIVE_INFINITY : Number(values.count);
    const inbox = ctx.client(InboxService);
    let received = 0;
    const show = presenter(ctx, values, device.id, (id) =>
      inbox.ackNotification({ id, acknowledge: true }, auth),
    );
    let backoff = 500;
    let lost = false;
    while (received < limit && !ctx.io.signal?.aborted) {
      const abort = new AbortController();
      const onStop = () => abort.abort();
      ctx.io.signal?.addEventListener("abort", onStop, { once: true });
      try {
        const since = ctx.config.load().device?.cursor ?? "";
        for await (const msg of inbox.subscribe({ since }, { ...auth, signal: abort.signal })) {
          backoff = 500;
          if (lost) {
            ctx.io.stderr("reconnected\n");
            lost = false;
          }
          if (msg.event.case === "cleared") show.cleared(msg.event.value);
          if (msg.event.case !== "notification") continue;
          const n = msg.event.value;
          await show.notification(n);
          // Received: the cursor moves first, so a failed acknowledgement costs no resend.
          ctx.config.update((c) => ({ ...c, device: { ...(c.device ?? device), cursor: n.id } }));
          await inbox.ackNotification({ id: n.id }, auth);
          if (++received >= limit) break;
        }
      } catch (err) {
        if (ctx.io.signal?.aborted) break;
        const e = HeraldError.from(err);
        if (e.code === "unauthenticated") {
          ctx.config.update(({ device: _d, ...rest }) => rest);
          throw err;
        }
        ctx.io.stderr(
          `connection lost (${e.message}), retrying in ${Math.round(backoff / 100) / 10} s\n`,
        );
        lost = true;
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(maxBackoffMs, backoff * 2);
      } finally {
        ctx.io.signal?.removeEventListener("abort", onStop);
        abort.abort();
      }
    }
    show.stop();
    return exit.ok;
  },
};

export const ack: Command = {
  name: "ack",
  summary: "acknowledge a notification as this machine (stops its repeats and escalation)",
  usage: "herald ack ID",
  options: {},
  async run(ctx, { positionals }) {
    const [id] = positionals;
    if (!id) throw new CliError("usage: herald ack ID", exit.usage);
    const device = await ensureDevice(ctx);
    await ctx
      .client(InboxService)
      .ackNotification(
        { id, acknowledge: true },
        { headers: { authorization: `Bearer ${device.credential}` } },
      );
    ctx.out(`acknowledged ${id}`, { id, acknowledged: true });
    return exit.ok;
  },
};
