/**
 * `GET /metrics` in Prometheus' text format: on the API's port, or, with HERALD_METRICS_PORT,
 * on a port of its own (same host) that an operator keeps off the public network, and then not
 * on the API's port at all. Unauthenticated either way, like the health endpoints: it carries
 * counts, never a secret or a credential id.
 */
import { createServer, type Server } from "node:http";
import type { FastifyInstance } from "fastify";
import type { Metrics } from "../../observability/metrics.ts";
import { listenFailure, listenOptions } from "../../supervisor/port.ts";

export function registerMetrics(
  app: FastifyInstance,
  metrics: Metrics,
  where: { host: string; port: number | undefined },
): void {
  const scrape = async () => ({
    type: metrics.registry.contentType,
    body: await metrics.registry.metrics(),
  });
  if (where.port === undefined) {
    app.get("/metrics", async (_req, reply) => {
      const { type, body } = await scrape();
      return reply.type(type).header("cache-control", "no-store").send(body);
    });
    return;
  }
  let server: Server | undefined;
  const { host, port } = where;
  app.addHook("onReady", async () => {
    server = createServer((req, res) => {
      if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics\n");
        return;
      }
      scrape().then(
        ({ type, body }) => res.writeHead(200, { "content-type": type }).end(body),
        (err: unknown) => {
          app.log.error({ err }, "metrics scrape failed");
          res.writeHead(500, { "content-type": "text/plain" }).end("scrape failed\n");
        },
      );
    });
    // Shared among the serving processes as the API's port is (supervisor/port.ts).
    await new Promise<void>((resolve, reject) => {
      server
        ?.once("error", (err: NodeJS.ErrnoException) =>
          reject(listenFailure(err, host, port, "HERALD_METRICS_PORT")),
        )
        .listen({ host, port, ...listenOptions }, resolve);
    });
    app.log.info({ port: metricsPort(server) }, "metrics listening");
  });
  app.addHook("onClose", async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });
  // Tests (and operators' scripts) learn the port the metrics server bound, e.g. with port 0.
  app.decorate("metricsPort", () => metricsPort(server));
}

function metricsPort(server: Server | undefined): number | undefined {
  const address = server?.address();
  return typeof address === "object" && address ? address.port : undefined;
}
