/**
 * Which project a call acts on. An API key belongs to one project. A CLI token acts for its
 * account: the project named by the `Herald-Project` header (id or name), else the default one.
 */
import type { HandlerContext } from "@connectrpc/connect";
import type { ProjectRepository } from "../db/index.ts";
import type { Principal } from "../domain/principal.ts";
import { heraldError } from "../errors.ts";
import { callKey, principalKey } from "./context.ts";

export function principalOf(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (!principal) throw heraldError("unauthenticated", "no credential");
  return principal;
}

export async function projectScope(
  ctx: HandlerContext,
  projects: ProjectRepository,
): Promise<{ projectId: string; accountId: string }> {
  const principal = principalOf(ctx);
  if (principal.kind === "apiKey") {
    return { projectId: principal.projectId, accountId: principal.accountId };
  }
  const named = ctx.values.get(callKey).project;
  const project = named
    ? await projects.resolve(principal.accountId, named)
    : await projects.defaultOf(principal.accountId);
  if (!project) throw heraldError("not_found", `project ${JSON.stringify(named)} not found`);
  return { projectId: project.id, accountId: principal.accountId };
}

/** Where this server is reached, for links it hands out: HERALD_PUBLIC_URL, else the host called. */
export function publicBase(ctx: HandlerContext, publicUrl: string | undefined): string {
  return publicUrl ?? `http://${ctx.values.get(callKey).host ?? "localhost"}`;
}

/**
 * The project a path names: `-` for the caller's own (projectScope), its id, or with a CLI token
 * its name. An API key names only its own project: any other is `not_found`, as one that does
 * not exist.
 */
export async function namedProjectScope(
  ctx: HandlerContext,
  projects: ProjectRepository,
  named: string,
): Promise<{ projectId: string; accountId: string }> {
  if (named === "-") return projectScope(ctx, projects);
  const principal = principalOf(ctx);
  const notFound = () => heraldError("not_found", `project ${JSON.stringify(named)} not found`);
  if (principal.kind === "apiKey") {
    if (named !== principal.projectId) throw notFound();
    return { projectId: principal.projectId, accountId: principal.accountId };
  }
  const project = await projects.resolve(principal.accountId, named);
  if (!project) throw notFound();
  return { projectId: project.id, accountId: principal.accountId };
}
