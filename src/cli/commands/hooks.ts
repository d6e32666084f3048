/** `herald hooks …`: the project's inbound hooks, for senders that speak their own format. */
import { type Hook, HookSchema, HookService } from "../../../gen/herald/v1/hook_service_pb.ts";
import { hookKinds } from "../../domain/hooks/kinds.ts";
import { senderSnippet } from "../../domain/hooks/snippets.ts";
import type { Command } from "../command.ts";
import { type Context, exit } from "../context.ts";
import { confirm, need, resolveId, resourceJson, table, when } from "../format.ts";

const client = (ctx: Context) => ctx.client(HookService);
const headers = (ctx: Context) => ({ headers: ctx.headers(ctx.publisherSecret) });
/** The project of the credential (an API key's, or `--project` / the default one). */
const own = "-";

async function hookId(ctx: Context, typed: string): Promise<string> {
  return resolveId(typed, "hook", async () =>
    (await client(ctx).listHooks({ projectId: own }, headers(ctx))).hooks.map((h) => ({
      id: h.id,
      label: `${h.kind} ${h.name}`,
    })),
  );
}

/** The URL, the secret (shown once, the warning on standard error) and the sender's snippet. */
function showSecret(ctx: Context, res: { secret: string; address: string; hook?: Hook }) {
  const hook = res.hook;
  if (!hook) return;
  if (!ctx.flags.json) {
    ctx.io.stderr("This secret is shown once and cannot be recovered. Store it now.\n");
  }
  const text = [
    `url:     ${hook.url}`,
    `secret:  ${res.secret}`,
    ...(res.address ? [`address: ${res.address}`] : []),
    "",
    senderSnippet(hook.kind, hook.url, res.secret, res.address),
  ].join("\n");
  const shown = { secret: res.secret, ...(res.address && { address: res.address }) };
  ctx.out(text, { ...shown, ...resourceJson(HookSchema, hook) });
}

const templateFlags = {
  title: "TEMPLATE: the title (generic hooks; Mustache, e.g. '{{service}} is {{status}}')",
  message: "TEMPLATE: the message (generic hooks)",
  priority: "TEMPLATE: the priority, rendering low, normal or high (generic hooks)",
  "click-url": "TEMPLATE: the link (generic hooks)",
  "topic-template": "TEMPLATE: the topic instead of --topic (generic hooks)",
};

export const hooks: Command[] = [
  {
    name: "hooks create",
    summary: "an address for GitHub, GitLab, Alertmanager, Grafana or any JSON (secret shown once)",
    usage: `herald hooks create ${hookKinds.join("|")} NAME [--topic TOPIC] [--title TEMPLATE …]`,
    options: {
      topic: { type: "string" },
      title: { type: "string" },
      message: { type: "string" },
      priority: { type: "string" },
      "click-url": { type: "string" },
      "topic-template": { type: "string" },
    },
    flags: { topic: "the topic of its notifications", ...templateFlags },
    example: "herald hooks create alertmanager prod-alerts --topic oncall",
    async run(ctx, { positionals, values }) {
      const [kind, name] = need(positionals, 2, "herald hooks create KIND NAME");
      const v = values as Record<string, string | undefined>;
      const template = {
        title: v.title ?? "",
        message: v.message ?? "",
        priority: v.priority ?? "",
        topic: v["topic-template"] ?? "",
        clickUrl: v["click-url"] ?? "",
      };
      const res = await client(ctx).createHook(
        {
          projectId: own,
          kind: kind as string,
          name: name as string,
          topic: v.topic ?? "",
          template,
        },
        headers(ctx),
      );
      showSecret(ctx, res);
      return exit.ok;
    },
  },
  {
    name: "hooks list",
    summary: "the project's inbound hooks and their URLs",
    usage: "herald hooks list",
    options: {},
    example: "herald hooks list --json",
    async run(ctx) {
      const { hooks: all } = await client(ctx).listHooks({ projectId: own }, headers(ctx));
      ctx.out(
        table([
          ["ID", "KIND", "NAME", "TOPIC", "URL", "CREATED"],
          ...all.map((h) => [h.id, h.kind, h.name, h.topic || "-", h.url, when(h.createdAt)]),
        ]),
        all.map((h) => resourceJson(HookSchema, h)),
      );
      return exit.ok;
    },
  },
  {
    name: "hooks delete",
    summary: "delete an inbound hook: its URL answers 401 from then on",
    usage: "herald hooks delete ID [--yes]",
    options: { yes: { type: "boolean", short: "y" } },
    flags: { yes: "delete without asking (scripts)" },
    example: "herald hooks delete 01a20e --yes",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald hooks delete ID");
      const id = await hookId(ctx, typed as string);
      await confirm(
        ctx,
        `Delete hook ${id}? Its sender is refused from now on`,
        values.yes === true,
      );
      await client(ctx).deleteHook({ projectId: own, hookId: id }, headers(ctx));
      ctx.out(`deleted ${id}`, { id, deleted: true });
      return exit.ok;
    },
  },
  {
    name: "hooks rotate",
    summary: "a new secret (shown once); the old one keeps working for 24 hours",
    usage: "herald hooks rotate ID",
    options: {},
    example: "herald hooks rotate 01a20e",
    async run(ctx, { positionals }) {
      const [typed] = need(positionals, 1, "herald hooks rotate ID");
      const id = await hookId(ctx, typed as string);
      showSecret(
        ctx,
        await client(ctx).rotateHookSecret({ projectId: own, hookId: id }, headers(ctx)),
      );
      return exit.ok;
    },
  },
];
