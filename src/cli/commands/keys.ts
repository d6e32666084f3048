/** `herald keys create|list|revoke`: a project's API keys. */
import { ApiKeyService } from "../../../gen/herald/v1/api_key_service_pb.ts";
import { ApiKeySchema } from "../../../gen/herald/v1/credential_pb.ts";
import type { Command } from "../command.ts";
import { exit } from "../context.ts";
import { confirm, expiryOf, need, resolveId, resourceJson, table, when } from "../format.ts";
import { projectId } from "./projects.ts";

export const keys: Command[] = [
  {
    name: "keys create",
    summary: "create an API key (its secret is shown once)",
    usage: "herald keys create NAME [--scope write|read …] [--expires 90d|DATE] [--project P]",
    options: { scope: { type: "string", multiple: true }, expires: { type: "string" } },
    flags: {
      scope: "write (publish; the default) and/or read (notifications and their status)",
      expires: "when the key stops working: a duration (90d, 12h, 2w) or a date; default never",
    },
    example: "herald keys create ci --scope write --expires 90d",
    async run(ctx, { positionals, values }) {
      const [name] = need(positionals, 1, "herald keys create NAME");
      const res = await ctx.client(ApiKeyService).createApiKey(
        {
          projectId: await projectId(ctx),
          name,
          scopes: (values.scope as string[] | undefined) ?? [],
          expiresAt: expiryOf(values.expires),
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
        expires_at: res.apiKey?.expiresAt ? when(res.apiKey.expiresAt) : null,
      });
      return exit.ok;
    },
  },
  {
    name: "keys list",
    summary: "list the project's API keys",
    usage: "herald keys list [--project P]",
    options: {},
    example: "herald keys list --project payments",
    async run(ctx) {
      const { apiKeys } = await ctx
        .client(ApiKeyService)
        .listApiKeys({ projectId: await projectId(ctx) }, { headers: ctx.headers(ctx.ownerToken) });
      ctx.out(
        table([
          ["ID", "NAME", "KEY", "SCOPES", "LAST USED", "EXPIRES", "REVOKED"],
          ...apiKeys.map((k) => [
            k.id,
            k.name,
            k.displayPrefix,
            k.scopes.join(","),
            when(k.lastUsedAt),
            when(k.expiresAt),
            when(k.revokedAt),
          ]),
        ]),
        apiKeys.map((k) => ({
          id: k.id,
          name: k.name,
          ...resourceJson(ApiKeySchema, k),
          revoked: k.revokedAt !== undefined,
        })),
      );
      return exit.ok;
    },
  },
  {
    name: "keys revoke",
    summary: "revoke an API key (effective everywhere within a second)",
    usage: "herald keys revoke ID [--yes]",
    options: { yes: { type: "boolean", short: "y" } },
    flags: { yes: "revoke without asking (scripts)" },
    example: "herald keys revoke 01a2f3 --yes",
    async run(ctx, { positionals, values }) {
      const [typed] = need(positionals, 1, "herald keys revoke ID");
      const keys = ctx.client(ApiKeyService);
      const headers = { headers: ctx.headers(ctx.ownerToken) };
      const id = await resolveId(typed as string, "API key", async () =>
        (await keys.listApiKeys({ projectId: await projectId(ctx) }, headers)).apiKeys.map((k) => ({
          id: k.id,
          label: `${k.name}, ${k.displayPrefix}`,
        })),
      );
      await confirm(
        ctx,
        `Revoke API key ${id}? Publishing with it stops within a second`,
        values.yes === true,
      );
      await keys.revokeApiKey({ id }, headers);
      ctx.out(`revoked ${id}`, { id, revoked: true });
      return exit.ok;
    },
  },
];
