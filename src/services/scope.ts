/**
 * Which project a call acts on. An API key belongs to one project. A CLI token acts for its
 * account: the project named by the `Herald-Project` header (id or name), else the default one.
 */
import type { HandlerContext } from "@connectrpc/connect";
import { heraldError } from "../errors.ts";
import { type Principal, principalKey } from "../server/context.ts";
import type { AccountStore } from "../store/accounts.ts";

export function principalOf(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (!principal) throw heraldError("unauthenticated", "no credential");
  return principal;
}

export async function projectScope(
  ctx: HandlerContext,
  accounts: AccountStore,
): Promise<{ projectId: string; accountId: string }> {
  const principal = principalOf(ctx);
  if (principal.kind === "apiKey") {
    return { projectId: principal.projectId, accountId: principal.accountId };
  }
  const named = ctx.requestHeader.get("herald-project");
  const project = named
    ? await accounts.resolveProject(principal.accountId, named)
    : await accounts.defaultProject(principal.accountId);
  if (!project) throw heraldError("not_found", `project ${JSON.stringify(named)} not found`);
  return { projectId: project.id, accountId: principal.accountId };
}
