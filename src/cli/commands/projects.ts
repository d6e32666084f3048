/** `herald projects list|create|use`, and how other commands find the project they act on. */
import { ProjectService } from "../../../gen/herald/v1/project_service_pb.ts";
import type { Command } from "../command.ts";
import { CliError, type Context, exit } from "../context.ts";
import { need, table, when } from "../format.ts";

/** The id of the named project (id or name), else of the one in use, else of the default. */
export async function projectId(ctx: Context, nameOrId?: string): Promise<string> {
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

export const projects: Command[] = [
  {
    name: "projects list",
    summary: "list your projects",
    usage: "herald projects list",
    options: {},
    example: "herald projects list",
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
    example: "herald projects create payments",
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
    example: "herald projects use payments",
    async run(ctx, { positionals }) {
      const [name] = need(positionals, 1, "herald projects use NAME");
      const id = await projectId(ctx, name);
      ctx.config.update((c) => ({ ...c, project: name }));
      ctx.out(`now using project ${name}`, { project: name, id });
      return exit.ok;
    },
  },
];
