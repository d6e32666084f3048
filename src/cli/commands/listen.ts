/**
 * `herald listen`: this machine as a `stream` device. Registers it on first use (with a pairing
 * code minted by the signed-in CLI), prints notifications as they arrive or runs a command with
 * each one as JSON on standard input, acknowledges them, and reconnects with backoff, catching up
 * from the last one it saw.
 */
import { hostname } from "node:os";
import { durationMs } from "@bufbuild/protobuf/wkt";
import { type Client, Code, ConnectError } from "@connectrpc/connect";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { InboxService, type SubscribeResponse } from "../../../gen/herald/v1/inbox_service_pb.ts";
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import { placeAfter } from "../../domain/stream-place.ts";
import { silenceWatch } from "../../domain/stream-silence.ts";
import { HeraldError } from "../../sdk/errors.ts";
import { Receipts } from "../../sdk/receipts.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { retryingLine, statusLine, wholeFlag } from "../format.ts";
import {
  deviceOf,
  placeOf,
  receiverInUse,
  type SavedDevice,
  savedDevices,
  withDevice,
  withoutDevices,
  withPlace,
} from "../saved-devices.ts";
import { execTimeoutOf, presenter } from "./listen-presenter.ts";
import { checkTopics, listenTopics } from "./listen-topics.ts";

export { formatNotification } from "./listen-presenter.ts";

/** Reconnecting waits at most this long, so a restarted server is heard from within seconds. */
const maxBackoffMs = 5_000;
/**
 * On the way out, receipts still queued get this long to go: after `--count` (a script waits
 * for them, under a rate limit too), or after Ctrl-C. The rest come again in the next catch-up.
 */
const receiptsCloseMs = { done: 30_000, stopped: 2_000 };

/** This machine's device for the server and account in use (saved-devices.ts), registered if none. */
async function ensureDevice(ctx: Context): Promise<SavedDevice> {
  const file = ctx.config.load();
  const receiver = await receiverInUse(ctx, file);
  const saved = deviceOf(file, receiver);
  if (saved) return saved;
  const devices = ctx.client(DeviceService);
  const { code } = await devices.createPairingCode({}, { headers: ctx.headers(ctx.ownerToken) });
  const signedIn = await devices.signInDevice({
    method: { case: "pairingCode", value: code },
    name: `${hostname()} (herald listen)`,
    platform: "stream",
  });
  const device: SavedDevice = {
    id: signedIn.device?.id as string,
    credential: signedIn.deviceCredential,
    ...receiver,
  };
  try {
    ctx.config.update((c) => withDevice(c, device, ctx.url));
  } catch (err) {
    // Not saved (a full disk): signed out again, rather than left receiving for nobody.
    const auth = { headers: { authorization: `Bearer ${device.credential}` } };
    await devices.signOutDevice({}, auth).catch(() => undefined);
    throw err;
  }
  ctx.io.stderr(`registered this machine as device ${device.id} on ${device.url}\n`);
  return device;
}

export const listen: Command = {
  name: "listen",
  summary: "receive notifications live on this machine (a stream device)",
  usage:
    "herald listen [--topic T …] [--exec CMD [--exec-timeout D]] [--count N] [--bell] [--desktop] [--json]",
  options: {
    topic: { type: "string", multiple: true },
    exec: { type: "string" },
    "exec-timeout": { type: "string" },
    count: { type: "string" },
    bell: { type: "boolean" },
    desktop: { type: "boolean" },
  },
  flags: {
    topic: "T: only these topics (repeat it for several); default every topic",
    exec: "CMD: run CMD for each notification, its JSON on standard input (through the shell)",
    "exec-timeout":
      "D: stop a CMD still running after D (like 30s or 5m), say so, and go on; default no limit",
    count: "N: stop after N notifications; default never",
    bell: "ring the terminal's bell before each notification",
    desktop: "also show each one as a desktop notification (notify-send, osascript)",
  },
  example: "herald listen --topic deploys --exec 'jq -r .title'",
  async run(ctx, { values }) {
    // Usage errors before a device is registered.
    execTimeoutOf(values);
    const limit = wholeFlag(values, "count", { min: 1, fallback: Number.POSITIVE_INFINITY });
    const topics = values.topic as string[] | undefined;
    if (topics) checkTopics(topics);
    const device = await ensureDevice(ctx);
    const auth = { headers: { authorization: `Bearer ${device.credential}` } };
    const { ours, own, leave } = await listenTopics(ctx, { id: device.id, auth }, topics);
    const inbox = ctx.client(InboxService);
    const receipts = new Receipts({
      many: (ids) => inbox.confirmReceipts({ ids }, auth),
      one: (id) => inbox.ackNotification({ id }, auth),
    });
    const show = presenter(ctx, values, device.id, {
      acknowledge: (id) => inbox.ackNotification({ id, acknowledge: true }, auth),
      respond: (id, actionId, text) => inbox.respondToNotification({ id, actionId, text }, auth),
    });
    ctx.io.stderr(listeningLine(topics, limit));
    // Whatever ends it (a count, a stop, a device signed out): the terminal's keys are given
    // back (raw mode off, stdin paused, so the process can exit) and receipts are sent.
    try {
      await receive(ctx, { auth, device, inbox, limit, ours, own, receipts, show });
    } finally {
      show.stop();
      const stopped = ctx.io.signal?.aborted ? "stopped" : "done";
      await Promise.all([receipts.close(receiptsCloseMs[stopped]), leave()]);
    }
    return exit.ok;
  },
};

/**
 * The longest the server stays silent, as each keepalive says: a stream not heard from for
 * longer (stream-silence.ts) is taken for dead, and `listen` subscribes again from its cursor,
 * so nothing is missed.
 */
const keepaliveIntervalOf = (msg: SubscribeResponse) =>
  msg.keepaliveInterval && durationMs(msg.keepaliveInterval);

/** A stream that broke: said, then waited out (a signed-out device is forgotten, and fails). */
async function connectionLost(
  ctx: Context,
  device: SavedDevice,
  err: unknown,
  backoff: number,
  status: ReturnType<typeof statusLine>,
): Promise<void> {
  const e = HeraldError.from(err);
  if (e.code === "unauthenticated") {
    ctx.config.update((c) => withoutDevices(c, (d) => d.id === device.id, ctx.url));
    throw new CliError(
      "this machine's device was signed out (removed, or signed out elsewhere): `herald listen` registers it again",
      exit.auth,
    );
  }
  status(retryingLine(e.message, backoff), false);
  await new Promise((r) => setTimeout(r, backoff));
}

/** What `listen` reads its stream with. */
interface Receiving {
  auth: { headers: { authorization: string } };
  device: SavedDevice;
  inbox: Client<typeof InboxService>;
  limit: number;
  /** Of the topics this listen asked for (listen-topics.ts). */
  ours: (n: Notification) => boolean;
  /** Those topics as the server stores them: none for every topic. */
  own: string[];
  receipts: Receipts;
  show: ReturnType<typeof presenter>;
}

/** Reads the device's stream until `limit` notifications, a stop, or a device signed out (thrown). */
async function receive(ctx: Context, r: Receiving): Promise<void> {
  const { auth, device, inbox, limit, ours, own, receipts, show } = r;
  let [received, backoff, lost, status] = [0, 500, false, statusLine(ctx)];
  const firstTime = recentIds(1000);
  // Where its stream starts again: after the newest notification it received.
  let since = placeOf(device, own);
  const keepPlace = placeKeeper(ctx, device.id, own);
  const heardFrom = silenceWatch(keepaliveIntervalOf);
  while (received < limit && !ctx.io.signal?.aborted) {
    const abort = new AbortController();
    const onStop = () => abort.abort();
    ctx.io.signal?.addEventListener("abort", onStop, { once: true });
    try {
      const stream = inbox.subscribe({ since }, { ...auth, signal: abort.signal });
      const silent = (why: string) => abort.abort(new ConnectError(why, Code.Unavailable));
      for await (const msg of heardFrom(stream, silent)) {
        backoff = 500;
        if (lost) {
          status("reconnected", true);
          lost = false;
        }
        if (msg.event.case !== "notification") {
          show.aside(msg.event);
          continue;
        }
        const n = msg.event.value;
        if (!ours(n)) continue;
        // At least once until acknowledged: one shown whose acknowledgement was lost comes again.
        // Its receipt still on its way, it was shown: a catch-up after a reconnect sends it again.
        const fresh = !receipts.has(n.id) && firstTime(n.id);
        // Not taken by the output (it closed): neither confirmed nor passed; it comes again.
        if (fresh && !(await show.notification(n, msg.quiet))) break;
        // Received: the cursor moves, and its receipt goes in the background (receipts.ts).
        since = placeAfter(since, n.id);
        keepPlace(since);
        receipts.add(n.id);
        if (fresh && ++received >= limit) break;
      }
    } catch (err) {
      if (ctx.io.signal?.aborted) break;
      await connectionLost(ctx, device, err, backoff, status);
      lost = true;
      backoff = Math.min(maxBackoffMs, backoff * 2);
    } finally {
      ctx.io.signal?.removeEventListener("abort", onStop);
      abort.abort();
    }
  }
}

export const ack: Command = {
  name: "ack",
  summary: "acknowledge a notification as this machine (stops its repeats and escalation)",
  usage: "herald ack ID",
  options: {},
  example: "herald ack 01a20e",
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

/** What `listen` says as it starts: what it listens for, and how to stop. */
function listeningLine(topics: string[] | undefined, limit: number): string {
  const what = topics ? `topic${topics.length > 1 ? "s" : ""} ${topics.join(", ")}` : "every topic";
  const count = Number.isFinite(limit) ? ` (${limit} notification${limit > 1 ? "s" : ""})` : "";
  return `listening for ${what}${count}; Ctrl-C stops\n`;
}

/**
 * Saves where the device is in its stream, for the next listen. One that cannot be saved (a
 * full disk) is said once, and listening goes on from the place in memory: before, it was taken
 * for a lost connection, and the notification shown came again.
 */
function placeKeeper(ctx: Context, id: string, topics: string[]): (place: string) => void {
  let told = false;
  return (place) => {
    try {
      // The device as saved now: another listen of this machine keeps its place in it too.
      ctx.config.update((c) => {
        const saved = savedDevices(c, ctx.url).find((d) => d.id === id);
        return saved ? withDevice(c, withPlace(saved, topics, place), ctx.url) : c;
      });
    } catch (err) {
      if (!told) {
        const why = ((err as Error).cause as Error | undefined)?.message ?? (err as Error).message;
        ctx.io.stderr(
          `warning: cannot save this machine's place in its stream to ${ctx.config.path} (${why}). Listening goes on; the next listen shows again what arrived after the last place saved\n`,
        );
      }
      told = true;
    }
  };
}

/** Whether an id is seen for the first time among the last `max` seen. */
function recentIds(max: number): (id: string) => boolean {
  const ids = new Set<string>();
  return (id) => {
    if (ids.has(id)) return false;
    ids.add(id);
    if (ids.size > max) ids.delete(ids.values().next().value as string);
    return true;
  };
}
