/** ProjectService: the owner's projects. Another account's project is always `not_found`. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ProjectService } from "../../gen/herald/v1/project_service_pb.ts";
import type { ProjectRepository } from "../db/index.ts";
import { heraldError } from "../errors.ts";
import { projectToProto } from "./mappers.ts";
import { principalOf } from "./scope.ts";

const nameTaken = (name: string) =>
  heraldError("already_exists", `a project named ${name} exists`, {
    violations: [{ field: "name", message: "is already used by another project of the account" }],
  });

const notFound = (id: string) => heraldError("not_found", `project ${id} not found`);

export function createProjectService(
  projects: ProjectRepository,
): ServiceImpl<typeof ProjectService> {
  return {
    async createProject(req, ctx) {
      const project = await projects.create(principalOf(ctx).accountId, req.name);
      if (!project) throw nameTaken(req.name);
      return { project: projectToProto(project) };
    },

    async listProjects(_req, ctx) {
      const list = await projects.list(principalOf(ctx).accountId);
      return { projects: list.map(projectToProto) };
    },

    async getProject(req, ctx) {
      const project = await projects.get(principalOf(ctx).accountId, req.id);
      if (!project) throw notFound(req.id);
      return { project: projectToProto(project) };
    },

    async renameProject(req, ctx) {
      const result = await projects.rename(principalOf(ctx).accountId, req.id, req.name);
      if (result === null) throw notFound(req.id);
      if (result === "taken") throw nameTaken(req.name);
      return { project: projectToProto(result) };
    },

    async setAcceptsEscalations(req, ctx) {
      const { accountId } = principalOf(ctx);
      const project = await projects.setAcceptsEscalations(
        accountId,
        req.id,
        req.acceptsEscalations,
      );
      if (!project) throw notFound(req.id);
      return { project: projectToProto(project) };
    },

    async deleteProject(req, ctx) {
      const result = await projects.delete(principalOf(ctx).accountId, req.id);
      if (result === "missing") throw notFound(req.id);
      if (result === "default") {
        throw heraldError("failed_precondition", "the default project cannot be deleted");
      }
      return {};
    },
  };
}
