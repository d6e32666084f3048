/** ProjectService: the owner's projects. Another account's project is always `not_found`. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { ProjectService } from "../../gen/herald/v1/project_service_pb.ts";
import { heraldError } from "../errors.ts";
import type { AccountStore } from "../store/accounts.ts";
import { projectToProto } from "./mappers.ts";
import { setRestStatus } from "./rest-status.ts";
import { principalOf } from "./scope.ts";

const nameTaken = (name: string) =>
  heraldError("already_exists", `a project named ${name} exists`, {
    violations: [{ field: "name", message: "is already used by another project of the account" }],
  });

const notFound = (id: string) => heraldError("not_found", `project ${id} not found`);

export function createProjectService(accounts: AccountStore): ServiceImpl<typeof ProjectService> {
  return {
    async createProject(req, ctx) {
      const project = await accounts.createProject(principalOf(ctx).accountId, req.name);
      if (!project) throw nameTaken(req.name);
      setRestStatus(ctx, 201, `/v1/projects/${project.id}`);
      return { project: projectToProto(project) };
    },

    async listProjects(_req, ctx) {
      const projects = await accounts.listProjects(principalOf(ctx).accountId);
      return { projects: projects.map(projectToProto) };
    },

    async getProject(req, ctx) {
      const project = await accounts.getProject(principalOf(ctx).accountId, req.id);
      if (!project) throw notFound(req.id);
      return { project: projectToProto(project) };
    },

    async renameProject(req, ctx) {
      const result = await accounts.renameProject(principalOf(ctx).accountId, req.id, req.name);
      if (result === null) throw notFound(req.id);
      if (result === "taken") throw nameTaken(req.name);
      return { project: projectToProto(result) };
    },

    async deleteProject(req, ctx) {
      const result = await accounts.deleteProject(principalOf(ctx).accountId, req.id);
      if (result === "missing") throw notFound(req.id);
      if (result === "default") {
        throw heraldError("failed_precondition", "the default project cannot be deleted");
      }
      return {};
    },
  };
}
