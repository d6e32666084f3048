/**
 * For load balancers and orchestrators, unauthenticated and cheap: `GET /healthz` (the process
 * is up and serving) and `GET /readyz` (it should get traffic: the database answers, its
 * migrations are applied, and it is not draining for a shutdown).
 */
import type { FastifyInstance } from "fastify";

export function registerHealth(
  app: FastifyInstance,
  databaseProblem: () => Promise<string | undefined>,
): void {
  let draining = false;
  app.addHook("preClose", async () => {
    draining = true;
  });
  app.get("/healthz", async (_req, reply) =>
    reply.header("cache-control", "no-store").send({ status: "ok" }),
  );
  app.get("/readyz", async (_req, reply) => {
    const problem = draining ? "draining for a shutdown" : await databaseProblem();
    reply.header("cache-control", "no-store");
    return problem
      ? reply.code(503).send({ status: "not_ready", reason: problem })
      : reply.send({ status: "ready" });
  });
}
