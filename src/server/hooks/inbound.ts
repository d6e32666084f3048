/**
 * `POST /v1/hooks/{hook_id}`: where GitHub, GitLab, Alertmanager, Grafana and any JSON sender
 * deliver their own payloads (docs/integrations.md). The HTTP request is read here (the body's
 * bytes, as signed, and the sender's headers); the use case (services/hook-intake.ts) finds the
 * hook, authenticates the sender and reads the payload; a notification it becomes is published
 * through Notify's implementation in this process, with the interceptors (logging, the hook's
 * and its account's rate limits, validation) and the quota and caps of any publish.
 *
 * Answers: 401 for an unknown hook or a wrong credential (one answer for both, counted as a
 * failed authentication of the address); 400 naming what the payload lacks; 200 with
 * `{"ignored": true, "reason"}` for an event the kind ignores; else `POST /v1/notify`'s answer
 * (202 and the notification, or 200 and `Idempotent-Replayed: true` for a sender's retry).
 */
import { create } from "@bufbuild/protobuf";
import type { ContextValues, Interceptor } from "@connectrpc/connect";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import type { FailedAuthThrottle } from "../../domain/failed-auth.ts";
import { callKey, principalKey } from "../../services/context.ts";
import type { HookIntake, HookIntakes, HookRequest } from "../../services/hook-intake.ts";
import { addressThrottled } from "../../services/password-auth.ts";
import type { UnarySpec } from "../grpc/unary.ts";
import { bearerSecret } from "../interceptors/auth.ts";
import { problemOf } from "../problem.ts";
import { answerProblem, answerRest, callUnary, replySignal } from "../rest/shim.ts";

export interface InboundHookOptions {
  intake: HookIntakes;
  /** Notify's implementation. */
  notify: UnarySpec;
  interceptors: Interceptor[];
  contextValues: (req: FastifyRequest) => ContextValues;
  shutdownSignal: AbortSignal;
  failures: FailedAuthThrottle;
  bodyLimit: number;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The sender's call, as the use case takes it. */
function hookRequest(req: FastifyRequest): HookRequest {
  return {
    hookId: (req.params as { hookId: string }).hookId,
    raw: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    contentType: header(req, "content-type") ?? "",
    event: header(req, "x-github-event") ?? header(req, "x-gitlab-event"),
    delivery:
      header(req, "x-github-delivery") ??
      header(req, "x-gitlab-event-uuid") ??
      header(req, "x-gitlab-webhook-uuid"),
    idempotencyKey: header(req, "idempotency-key"),
    credentials: {
      signature: header(req, "x-hub-signature-256"),
      token: header(req, "x-gitlab-token"),
      bearer: bearerSecret(header(req, "authorization")),
    },
  };
}

export type HookPublishOptions = Pick<
  InboundHookOptions,
  "notify" | "interceptors" | "shutdownSignal"
>;

/** Publishes what a hook's event became, through Notify's implementation, as the hook. */
export function publishHookEvent(
  o: HookPublishOptions,
  intake: Extract<HookIntake, { kind: "publish" }>,
  values: ContextValues,
  signal: AbortSignal | (() => AbortSignal),
) {
  values.set(principalKey, intake.principal);
  values.set(callKey, { ...values.get(callKey), idempotencyKey: intake.idempotencyKey });
  const input = create(NotifyRequestSchema, intake.request);
  return callUnary(o.notify, input, signal, {
    ...o,
    contextValues: values,
    requestHeader: new Headers(),
  });
}

const refusal = "unknown hook, or a missing or wrong credential";

async function receive(req: FastifyRequest, reply: FastifyReply, o: InboundHookOptions) {
  const wait = o.failures.blockedFor(req.ip);
  if (wait !== undefined) throw addressThrottled(wait);
  const intake = await o.intake.receive(hookRequest(req));
  if (intake.kind === "refused") {
    await o.failures.failed(req.ip);
    const p = problemOf("unauthenticated", refusal, req.id);
    return reply.code(p.status).type("application/problem+json").send(p.body);
  }
  if (intake.kind === "ignored") {
    return reply.code(200).send({ ignored: true, reason: intake.reason });
  }
  const { output, header: headers } = await publishHookEvent(
    o,
    intake,
    o.contextValues(req),
    replySignal(reply),
  );
  await answerRest(reply, o.notify, output, headers);
}

export async function registerInboundHooks(app: FastifyInstance, o: InboundHookOptions) {
  await app.register(async (hooks) => {
    // The body's bytes as sent, whatever the content type: GitHub signs exactly those.
    hooks.removeAllContentTypeParsers();
    hooks.addContentTypeParser("*", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
    hooks.post("/v1/hooks/:hookId", { bodyLimit: o.bodyLimit }, async (req, reply) => {
      try {
        return await receive(req, reply, o);
      } catch (err) {
        return answerProblem(req, reply, err);
      }
    });
  });
}
