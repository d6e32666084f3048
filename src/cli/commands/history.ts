/** `herald history` and `herald status`: what was published and where it went. */
import { NotificationSchema } from "../../../gen/herald/v1/notification_pb.ts";
import { NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import type { Command } from "../command.ts";
import { type Context, exit } from "../context.ts";
import { need, resolveId, resourceJson, shortIds, table, when, wholeFlag } from "../format.ts";

/** A push's attempts at its provider; a stream device is not pushed, so it has none to count. */
const attemptsOf = (d: { platform: string; attempts: number }) =>
  d.platform === "stream" ? "-" : String(d.attempts);

/** The notification a typed id (or unique prefix) names, and a client to act on it. */
async function pick(ctx: Context, typed: string) {
  const notify = ctx.client(NotifyService);
  const headers = { headers: ctx.headers(ctx.publisherSecret) };
  const id = await resolveId(typed, "notification", async () =>
    (await notify.listNotifications({ pageSize: 100 }, headers)).notifications.map((x) => ({
      id: x.id,
      label: x.title,
    })),
  );
  return { notify, headers, id };
}

export const history: Command[] = [
  {
    name: "history",
    summary: "recent notifications of the project",
    usage: "herald history [--topic T] [--limit N]",
    options: { topic: { type: "string" }, limit: { type: "string" } },
    flags: {
      topic: "T: only this topic; default every topic",
      limit: "N: how many, newest first (default 20, at most 100)",
    },
    example: "herald history --topic deploys --limit 5",
    async run(ctx, { values }) {
      const limit = wholeFlag(values, "limit", { min: 1, max: 100, fallback: 20 });
      const res = await ctx
        .client(NotifyService)
        .listNotifications(
          { topic: (values.topic as string | undefined) ?? "", pageSize: limit },
          { headers: ctx.headers(ctx.publisherSecret) },
        );
      // Ids as short as they stay unique (herald status and ack take them back); --json has all.
      const short = shortIds(res.notifications.map((n) => n.id));
      ctx.out(
        table([
          ["ID", "CREATED", "TOPIC", "STATUS", "TITLE"],
          ...res.notifications.map((n) => [
            short.get(n.id) ?? n.id,
            when(n.createdAt),
            n.topic,
            n.status,
            n.title,
          ]),
        ]),
        res.notifications.map((n) => resourceJson(NotificationSchema, n)),
      );
      return exit.ok;
    },
  },
  {
    name: "status",
    summary: "a notification's delivery, device by device",
    usage: "herald status ID",
    options: {},
    example: "herald status 01a20e",
    async run(ctx, { positionals }) {
      const [typed] = need(positionals, 1, "herald status ID");
      const { notify, headers, id } = await pick(ctx, typed as string);
      const { notification: n } = await notify.getNotification({ id }, headers);
      const devices = n?.deviceDeliveries ?? [];
      ctx.out(
        `${n?.title}\nstatus: ${n?.status}\n\n${table([["DEVICE", "PLATFORM", "STATE", "ATTEMPTS", "UPDATED", "ERROR"], ...devices.map((d) => [d.deviceName, d.platform, d.state, attemptsOf(d), when(d.updatedAt), d.lastError])])}`,
        {
          ...(n ? resourceJson(NotificationSchema, n) : {}),
          id: n?.id,
          status: n?.status,
          devices: devices.map((d) => ({
            device_id: d.deviceId,
            name: d.deviceName,
            platform: d.platform,
            state: d.state,
            attempts: d.attempts,
            last_error: d.lastError,
          })),
        },
      );
      return exit.ok;
    },
  },
  {
    name: "cancel",
    summary: "cancel a scheduled notification, or its copies not sent yet",
    usage: "herald cancel ID",
    options: {},
    example: "herald cancel 0193f0c2",
    async run(ctx, { positionals }) {
      const [typed] = need(positionals, 1, "herald cancel ID");
      const { notify, headers, id } = await pick(ctx, typed as string);
      const { notification: n } = await notify.cancelNotification({ id }, headers);
      const canceled = n?.deliveries?.canceled ?? 0;
      ctx.out(
        n?.status === "canceled"
          ? `canceled: ${n.title} will not be sent`
          : `canceled ${canceled} ${canceled === 1 ? "copy" : "copies"} not yet sent of ${n?.title} (status: ${n?.status})`,
        n ? resourceJson(NotificationSchema, n) : {},
      );
      return exit.ok;
    },
  },
];
