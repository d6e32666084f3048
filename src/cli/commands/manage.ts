/** `herald projects|keys|devices …`, `history` and `status`: the owner's views and changes. */
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { ApiKeyService } from "../../../gen/herald/v1/api_key_service_pb.ts";
import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import { NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import { ProjectService } from "../../../gen/herald/v1/project_service_pb.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";

const when = (t?: Timestamp) =>
  t
    ? timestampDate(t)
        .toISOString()
        .replace(/\.\d+Z$/, "Z")
    : "—";

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function need(positionals: string[], n: number, usage: string): string[] {
  if (positionals.length < n) throw new CliError(`usage: ${usage}`, exit.usage);
  return positionals;
}

async function projectId(ctx: Context, nameOrId?: string): Promise<string> {
  const { projects } = await ctx
    .client(ProjectService)
    .listProjects({}, { headers: ctx.headers(ctx.ownerToken) });
  const wanted = nameOrId ?? ctx.project;
  const p = wanted
    ? projects.find((x) => x.id === wanted || x.name === wanted)
    : projects.find((x) => x.isDefault);
  if (!p)
    throw new CliError(
      `no project ${JSON.stringify(wanted)}: see \`herald projects list\``,
      exit.failed,
    );
  return p.id;
}

export const manage: Command[] = [
  {
    name: "projects list",
    summary: "list your projects",
    usage: "herald projects list",
    options: {},
    async run(ctx) {
      const { projects } = await ctx
        .client(ProjectService)
        .listProjects({}, { headers: ctx.headers(ctx.ownerToken) });
      const current = ctx.project;
      ctx.out(
        table([
          ["", "NAME", "ID", "CREATED"],
          ...projects.map((p) => [
            p.name === current || p.id === current || (!current && p.isDefault) ? "*" : "",
            p.name,
            p.id,
            when(p.createdAt),
          ]),
        ]),
        projects.map((p) => ({ id: p.id, name: p.name, is_default: p.isDefault })),
      );
      return exit.ok;
    },
  },
  {
    name: "projects create",
    summary: "create a project",
    usage: "herald projects create NAME",
    options: {},
    async run(ctx, { positionals }) {
      const [name] = need(positionals, 1, "herald projects create NAME");
      const { project } = await ctx
        .client(ProjectService)
        .createProject({ name }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(`created project ${project?.name} (${project?.id})`, {
        id: project?.id,
        name: project?.name,
      });
      return exit.ok;
    },
  },
  {
    name: "projects use",
    summary: "make a project the one this machine publishes into and reads",
    usage: "herald projects use NAME",
    options: {},
    async run(ctx, { positionals }) {
      const [name] = need(positionals, 1, "herald projects use NAME");
      const id = await projectId(ctx, name);
      ctx.config.update((c) => ({ ...c, project: name }));
      ctx.out(`now using project ${name}`, { project: name, id });
      return exit.ok;
    },
  },
  {
    name: "keys create",
    summary: "create an API key (its secret is shown once)",
    usage: "herald keys create NAME [--scope write|read …] [--project P]",
    options: { scope: { type: "string", multiple: true } },
    async run(ctx, { positionals, values }) {
      const [name] = need(positionals, 1, "herald keys create NAME");
      const res = await ctx.client(ApiKeyService).createApiKey(
        {
          projectId: await projectId(ctx),
          name,
          scopes: (values.scope as string[] | undefined) ?? [],
        },
        { headers: ctx.headers(ctx.ownerToken) },
      );
      if (!ctx.flags.json) {
        ctx.io.stderr("This secret is shown once and cannot be recovered. Store it now:\n");
      }
      ctx.out(res.secret, {
        secret: res.secret,
        id: res.apiKey?.id,
        name,
        scopes: res.apiKey?.scopes,
      });
      return exit.ok;
    },
  },
  {
    name: "keys list",
    summary: "list the project's API keys",
    usage: "herald keys list [--project P]",
    options: {},
    async run(ctx) {
      const { apiKeys } = await ctx
        .client(ApiKeyService)
        .listApiKeys({ projectId: await projectId(ctx) }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(
        table([
          ["ID", "NAME", "KEY", "SCOPES", "LAST USED", "REVOKED"],
          ...apiKeys.map((k) => [
            k.id,
            k.name,
            k.displayPrefix,
            k.scopes.join(","),
            when(k.lastUsedAt),
            when(k.revokedAt),
          ]),
        ]),
        apiKeys.map((k) => ({
          id: k.id,
          name: k.name,
          display_prefix: k.displayPrefix,
          scopes: k.scopes,
          revoked: k.revokedAt !== undefined,
        })),
      );
      return exit.ok;
    },
  },
  {
    name: "keys revoke",
    summary: "revoke an API key (effective everywhere within a second)",
    usage: "herald keys revoke ID",
    options: {},
    async run(ctx, { positionals }) {
      const [id] = need(positionals, 1, "herald keys revoke ID");
      await ctx
        .client(ApiKeyService)
        .revokeApiKey({ id }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(`revoked ${id}`, { id, revoked: true });
      return exit.ok;
    },
  },
  {
    name: "devices list",
    summary: "list your devices",
    usage: "herald devices list",
    options: {},
    async run(ctx) {
      const { devices } = await ctx
        .client(DeviceService)
        .listDevices({}, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(
        table([
          ["ID", "NAME", "PLATFORM", "TOKEN", "ENABLED", "TOPICS"],
          ...devices.map((d) => [
            d.id,
            d.name,
            d.platform,
            d.tokenLast4 ? `…${d.tokenLast4}` : "",
            d.enabled ? "yes" : `no: ${d.disabledReason}`,
            d.topics.join(",") || "all",
          ]),
        ]),
        devices.map((d) => ({
          id: d.id,
          name: d.name,
          platform: d.platform,
          enabled: d.enabled,
          topics: d.topics,
        })),
      );
      return exit.ok;
    },
  },
  {
    name: "devices rename",
    summary: "rename a device",
    usage: "herald devices rename ID NAME",
    options: {},
    async run(ctx, { positionals }) {
      const [id, ...name] = need(positionals, 2, "herald devices rename ID NAME");
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
    name: "devices remove",
    summary: "remove a device (it stops receiving at once)",
    usage: "herald devices remove ID",
    options: {},
    async run(ctx, { positionals }) {
      const [id] = need(positionals, 1, "herald devices remove ID");
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
    async run(ctx, { positionals }) {
      const [id] = need(positionals, 1, "herald devices test ID");
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
  {
    name: "history",
    summary: "recent notifications of the project",
    usage: "herald history [--topic T] [--limit N]",
    options: { topic: { type: "string" }, limit: { type: "string" } },
    async run(ctx, { values }) {
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100)
        throw new CliError("--limit must be 1..100", exit.usage);
      const res = await ctx
        .client(NotifyService)
        .listNotifications(
          { topic: (values.topic as string | undefined) ?? "", pageSize: limit },
          { headers: ctx.headers(ctx.publisherSecret) },
        );
      ctx.out(
        table([
          ["ID", "CREATED", "TOPIC", "STATUS", "TITLE"],
          ...res.notifications.map((n) => [n.id, when(n.createdAt), n.topic, n.status, n.title]),
        ]),
        res.notifications.map((n) => ({
          id: n.id,
          created_at: when(n.createdAt),
          topic: n.topic,
          status: n.status,
          title: n.title,
        })),
      );
      return exit.ok;
    },
  },
  {
    name: "status",
    summary: "a notification's delivery, device by device",
    usage: "herald status ID",
    options: {},
    async run(ctx, { positionals }) {
      const [id] = need(positionals, 1, "herald status ID");
      const { notification: n } = await ctx
        .client(NotifyService)
        .getNotification({ id }, { headers: ctx.headers(ctx.publisherSecret) });
      const devices = n?.deviceDeliveries ?? [];
      ctx.out(
        `${n?.title}\nstatus: ${n?.status}\n\n${table([["DEVICE", "PLATFORM", "STATE", "ATTEMPTS", "UPDATED", "ERROR"], ...devices.map((d) => [d.deviceName, d.platform, d.state, String(d.attempts), when(d.updatedAt), d.lastError])])}`,
        {
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
];
