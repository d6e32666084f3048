/**
 * For load balancers and orchestrators, unauthenticated and cheap: `GET /healthz` (the process
 * is up and serving) and `GET /readyz` (it should get traffic: see Readiness). gRPC clients ask
 * the same through grpc.health.v1 (server/grpc/health.ts).
 */
import type { FastifyInstance } from "fastify";
import type { Readiness } from "../readiness.ts";

export function registerHealth(app: FastifyInstance, readiness: Readiness): void {
  app.addHook("preClose", async () => readiness.drain());
  app.get("/healthz", async (_req, reply) =>
    reply.header("cache-control", "no-store").send({ status: "ok" }),
  );
  app.get("/readyz", async (_req, reply) => {
    const problem = await readiness.problem();
    reply.header("cache-control", "no-store");
    return problem
      ? reply.code(503).send({ status: "not_ready", reason: problem })
      : reply.send({ status: "ready" });
  });
}
