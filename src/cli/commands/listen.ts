/**
 * `herald listen`: this machine as a `stream` device. Registers it on first use (with a pairing
 * code minted by the signed-in CLI), prints notifications as they arrive or runs a command with
 * each one as JSON on standard input, acknowledges them, and reconnects with backoff, catching up
 * from the last one it saw.
 */
import { spawn } from "node:child_process";
import { hostname } from "node:os";
import { toJson } from "@bufbuild/protobuf";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../../gen/herald/v1/inbox_service_pb.ts";
import { NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { HeraldError } from "../../sdk/errors.ts";
import type { Command } from "../command.ts";
import { type Context, exit } from "../context.ts";

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

export const listen: Command = {
  name: "listen",
  summary: "receive notifications live on this machine (a stream device)",
  usage: "herald listen [--topic T …] [--exec CMD] [--count N]",
  options: {
    topic: { type: "string", multiple: true },
    exec: { type: "string" },
    count: { type: "string" },
  },
  async run(ctx, { values }) {
    const device = await ensureDevice(ctx);
    const auth = { headers: { authorization: `Bearer ${device.credential}` } };
    const topics = values.topic as string[] | undefined;
    if (topics) await ctx.client(DeviceService).setTopicFilter({ topics }, auth);
    const limit = values.count === undefined ? Number.POSITIVE_INFINITY : Number(values.count);
    const inbox = ctx.client(InboxService);
    let received = 0;
    let backoff = 500;
    while (received < limit && !ctx.io.signal?.aborted) {
      const abort = new AbortController();
      const onStop = () => abort.abort();
      ctx.io.signal?.addEventListener("abort", onStop, { once: true });
      try {
        const since = ctx.config.load().device?.cursor ?? "";
        for await (const msg of inbox.subscribe({ since }, { ...auth, signal: abort.signal })) {
          backoff = 500;
          if (msg.event.case !== "notification") continue;
          const n = msg.event.value;
          const json = JSON.stringify(toJson(NotificationSchema, n, { useProtoFieldName: true }));
          if (typeof values.exec === "string") {
            await runExec(values.exec, json, ctx.io.env);
          } else {
            ctx.out(
              `[${n.topic}] ${n.title}${n.message ? ` — ${n.message}` : ""}`,
              JSON.parse(json),
            );
          }
          await inbox.ackNotification({ id: n.id }, auth);
          ctx.config.update((c) => ({ ...c, device: { ...(c.device ?? device), cursor: n.id } }));
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
          `connection lost (${e.message}); reconnecting in ${Math.round(backoff / 100) / 10}s\n`,
        );
        await new Promise((r) => setTimeout(r, backoff));
        backoff = Math.min(30_000, backoff * 2);
      } finally {
        ctx.io.signal?.removeEventListener("abort", onStop);
        abort.abort();
      }
    }
    return exit.ok;
  },
};
