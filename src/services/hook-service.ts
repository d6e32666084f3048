/**
 * HookService: a project's inbound hooks. The project is named in the path (`-`: the caller's
 * own), and a credential of one project never sees or changes another's hooks: ids and
 * projects of others are `not_found`. A secret is shown once, at creation and at a rotation.
 */
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { HookService, HookTemplate } from "../../gen/herald/v1/hook_service_pb.ts";
import type { HookRepository, HookRow, ProjectRepository } from "../db/index.ts";
import {
  emailAddress,
  type HookTemplateText,
  mailDomainOf,
  templateFields,
  templateProblem,
} from "../domain/hooks/index.ts";
import { camelCase } from "../domain/notification.ts";
import { type FieldViolation, heraldError } from "../errors.ts";
import { namedProjectScope, publicBase } from "./scope.ts";

export interface HookDeps {
  hooks: HookRepository;
  projects: ProjectRepository;
  publicUrl: string | undefined;
  /** The domain of email hooks' addresses (HERALD_SMTP_DOMAIN), when the operator set one. */
  mailDomain: string | undefined;
}

const camel = (field: string) => camelCase(field) as keyof HookTemplate;

function hookToProto(h: HookRow, base: string) {
  return {
    id: h.id,
    projectId: h.project_id,
    kind: h.kind,
    name: h.name,
    topic: h.topic,
    url: `${base}/v1/hooks/${h.id}`,
    createdAt: timestampFromDate(new Date(h.created_at)),
    template: h.template
      ? Object.fromEntries(templateFields.map((f) => [camel(f), h.template?.[f] ?? ""]))
      : undefined,
    previousSecretUntil: h.previous_until
      ? timestampFromDate(new Date(h.previous_until))
      : undefined,
  };
}

/** A template as stored: a `generic` hook's, checked field by field; none for other kinds. */
function templateOf(kind: string, template: HookTemplate | undefined): HookTemplateText | null {
  if (!template) return null;
  const text = Object.fromEntries(
    templateFields.map((f) => [f, template[camel(f)] as string]),
  ) as HookTemplateText;
  if (kind !== "generic") {
    if (templateFields.every((f) => text[f] === "")) return null;
    throw invalid([{ field: "template", message: "only generic hooks take a template" }]);
  }
  const violations: FieldViolation[] = [];
  for (const f of templateFields) {
    const problem = text[f] ? templateProblem(text[f]) : undefined;
    if (problem) violations.push({ field: `template.${f}`, message: problem });
  }
  if (violations.length > 0) throw invalid(violations);
  return text;
}

const invalid = (violations: FieldViolation[]) =>
  heraldError("invalid_argument", `invalid request: ${violations[0]?.field}`, { violations });

const notFound = (id: string) => heraldError("not_found", `hook ${id} not found`);

export function createHookService(deps: HookDeps): ServiceImpl<typeof HookService> {
  const { hooks, projects } = deps;
  const scope = (ctx: HandlerContext, named: string) => namedProjectScope(ctx, projects, named);
  const base = (ctx: HandlerContext) => publicBase(ctx, deps.publicUrl);
  /** What a new secret gives: the hook, the secret, and an `email` hook's address. */
  const shown = (ctx: HandlerContext, made: { hook: HookRow; secret: string }) => ({
    hook: hookToProto(made.hook, base(ctx)),
    secret: made.secret,
    address:
      made.hook.kind === "email"
        ? emailAddress(
            made.hook.id,
            made.secret,
            mailDomainOf(new URL(base(ctx)).hostname, deps.mailDomain),
          )
        : "",
  });
  return {
    async createHook(req, ctx) {
      const { projectId } = await scope(ctx, req.projectId);
      const template = templateOf(req.kind, req.template);
      const made = await hooks.create(projectId, {
        kind: req.kind,
        name: req.name,
        topic: req.topic,
        template,
      });
      return shown(ctx, made);
    },

    async listHooks(req, ctx) {
      const { projectId } = await scope(ctx, req.projectId);
      return { hooks: (await hooks.list(projectId)).map((h) => hookToProto(h, base(ctx))) };
    },

    async deleteHook(req, ctx) {
      const { projectId } = await scope(ctx, req.projectId);
      if (!(await hooks.delete(projectId, req.hookId))) throw notFound(req.hookId);
      return {};
    },

    async rotateHookSecret(req, ctx) {
      const { projectId } = await scope(ctx, req.projectId);
      const rotated = await hooks.rotate(projectId, req.hookId);
      if (!rotated) throw notFound(req.hookId);
      return shown(ctx, rotated);
    },
  };
}
