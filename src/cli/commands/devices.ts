/** `herald devices list|rename|quiet|topics|remove|test|pair`: the account's receiving devices. */
import { DeviceSchema } from "../../../gen/herald/v1/device_pb.ts";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { quietHoursText } from "../../domain/quiet-hours.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { confirm, need, resolveId, resourceJson, table, when } from "../format.ts";
import { savedDevices } from "../saved-devices.ts";
import { checkTopics } from "./listen-topics.ts";

/** A device's full id from what was typed (a unique prefix will do). */
async function deviceId(ctx: Context, typed: string): Promise<string> {
  return resolveId(typed, "device", async () =>
    (
      await ctx.client(DeviceService).listDevices({}, { headers: ctx.headers(ctx.ownerToken) })
    ).devices.map((d) => ({ id: d.id, label: d.name })),
  );
}

export const devices: Command[] = [
  {
    name: "devices list",
    summary: "list your devices (* marks this machine's, which `herald listen` registered)",
    usage: "herald devices list",
    options: {},
    example: "herald devices list",
    async run(ctx) {
      const { devices } = await ctx
        .client(DeviceService)
        .listDevices({}, { headers: ctx.headers(ctx.ownerToken) });
      // `*`: this machine's (`herald listen`'s), as `tokens list` marks this machine's token.
      const mine = new Set(savedDevices(ctx.config.load(), ctx.url).map((d) => d.id));
      ctx.out(
        table([
          ["ID", "NAME", "PLATFORM", "TOKEN", "ENABLED", "TOPICS", "QUIET HOURS"],
          ...devices.map((d) => [
            mine.has(d.id) ? `${d.id} *` : d.id,
            d.name,
            d.platform,
            d.tokenLast4 ? `…${d.tokenLast4}` : "",
            d.enabled ? "yes" : `no: ${d.disabledReason}`,
            // Not "all", which a device of the topic "all" would show too.
            d.topics.join(",") || "every topic",
            quietHoursText(d.quietHours) || "-",
          ]),
        ]),
        devices.map((d) => resourceJson(DeviceSchema, d)),
      );
      return exit.ok;
    },
  },
  {
    name: "devices rename",
    summary: "rename a device",
    usage: "herald devices rename ID NAME",
    options: {},
    example: 'herald devices rename 01a20e "Work phone"',
    async run(ctx, { positionals }) {
      const [typed, ...name] = need(positionals, 2, "herald devices rename ID NAME");
      const id = await deviceId(ctx, typed as string);
      await ctx
        .client(DeviceService)
        .renameDevice(
          { id: id as string, name: name.join(" ") },
          { headers: ctx.headers(ctx.ownerToken) },
        );
      ctx.out(`renamed ${id}`, { id, name: name.join(" ") });
      return exit.ok;
    },
  },
  {
    name: "devices quiet",
    summary: "quiet hours: low and normal arrive silently, high breaks through",
    usage: "herald devices quiet ID --from HH:MM --to HH:MM [--tz ZONE] | --off",
    options: {
      from: { type: "string" },
      to: { type: "string" },
      tz: { type: "string" },
      off: { type: "boolean" },
    },
    flags: {
      from: "HH:MM: when they start (24-hour clock)",
      to: "HH:MM: when they end (earlier than --from: the next day)",
      tz: "an IANA time zone (default: this machine's)",
      off: "no quiet hours",
    },
    example: "herald devices quiet 01a20e --from 22:00 --to 07:00 --tz Europe/Paris",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald devices quiet ID --from HH:MM --to HH:MM");
      const v = values as { from?: string; to?: string; tz?: string; off?: boolean };
      if (!v.off && (!v.from || !v.to)) {
        throw new CliError("give --from and --to (HH:MM), or --off", exit.usage);
      }
      const id = await deviceId(ctx, typed as string);
      const timeZone = v.tz ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
      const quietHours = v.off ? undefined : { timeZone, start: v.from, end: v.to };
      const { device } = await ctx
        .client(DeviceService)
        .setQuietHours({ id, quietHours }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(
        `quiet hours of ${device?.name ?? id}: ${quietHoursText(device?.quietHours) || "none"}`,
        device ? resourceJson(DeviceSchema, device) : {},
      );
      return exit.ok;
    },
  },
  {
    name: "devices topics",
    summary: "the topics a device receives (a phone: only the pages, say)",
    usage: "herald devices topics ID (--topic T … | --all)",
    options: { topic: { type: "string", multiple: true }, all: { type: "boolean" } },
    flags: {
      topic:
        "T: a topic, project/topic or project/* it receives (repeat it for several); a `herald listen` device takes its own --topic each time it starts",
      all: "every topic of every project (no filter)",
    },
    example: "herald devices topics 01a20e --topic oncall --topic ci/deploys",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald devices topics ID (--topic T … | --all)");
      const topics = values.all === true ? [] : (values.topic as string[] | undefined);
      if (!topics || (values.all && values.topic)) {
        throw new CliError("give --topic T (repeat it for several), or --all", exit.usage);
      }
      checkTopics(topics);
      const id = await deviceId(ctx, typed as string);
      const { device } = await ctx
        .client(DeviceService)
        .setTopicFilter({ id, topics }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(
        `topics of ${device?.name ?? id}: ${device?.topics.join(", ") || "every topic"}`,
        device ? resourceJson(DeviceSchema, device) : {},
      );
      return exit.ok;
    },
  },
  {
    name: "devices remove",
    summary: "remove a device (it stops receiving at once)",
    usage: "herald devices remove ID [--yes]",
    options: { yes: { type: "boolean", short: "y" } },
    flags: { yes: "remove without asking (scripts)" },
    example: "herald devices remove 01a20e --yes",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald devices remove ID");
      const id = await deviceId(ctx, typed as string);
      await confirm(ctx, `Remove device ${id}? It stops receiving at once`, values.yes === true);
      await ctx
        .client(DeviceService)
        .removeDevice({ id }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(`removed ${id}`, { id, removed: true });
      return exit.ok;
    },
  },
  {
    name: "devices test",
    summary: "send a test notification to one device",
    usage: "herald devices test ID",
    options: {},
    example: "herald devices test 01a20e",
    async run(ctx, { positionals }) {
      const [typed] = need(positionals, 1, "herald devices test ID");
      const id = await deviceId(ctx, typed as string);
      const res = await ctx
        .client(DeviceService)
        .sendTestNotification({ id }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(`sent ${res.notificationId}: see \`herald status ${res.notificationId}\``, {
        notification_id: res.notificationId,
      });
      return exit.ok;
    },
  },
  {
    name: "devices pair",
    summary: "print a short-lived code to sign a phone in",
    usage: "herald devices pair",
    options: {},
    example: "herald devices pair",
    async run(ctx) {
      const res = await ctx
        .client(DeviceService)
        .createPairingCode({}, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(`${res.code}\n(enter it in the Herald app within 10 minutes; it works once)`, {
        code: res.code,
        expires_at: when(res.expiresAt),
      });
      return exit.ok;
    },
  },
];
