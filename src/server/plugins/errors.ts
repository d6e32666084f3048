/**
 * Every answer that is not a handler's: 404 for an unknown path, 405 with `Allow` for a known
 * path called with another method, and problem details for errors Fastify raised (body too
 * large, unreadable) or that escaped a route. Unexpected errors are logged, never described.
 */
import type { FastifyInstance } from "fastify";
import { problemFor, problemOf } from "../problem.ts";

/** A route's path pattern as a regular expression (`:id` matches one segment). */
function patternOf(url: string): RegExp {
  const parts = url
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")));
  return new RegExp(`^${parts.join("/")}$`);
}

export function registerErrorHandling(app: FastifyInstance, bodyLimitBytes: number): void {
  // Every route's method and path pattern, so that a known path called with another method is
  // 405 with `Allow` rather than 404. Collected as routes register, so no list is kept by hand.
  const routes: { method: string; pattern: RegExp }[] = [];
  app.addHook("onRoute", (route) => {
    const pattern = patternOf(route.url);
    for (const method of [route.method].flat()) routes.push({ method, pattern });
  });
  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split("?")[0] ?? "";
    const allow = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    const p =
      allow.length > 0
        ? problemOf(
            "method_not_allowed",
            `${path} does not take ${req.method}; it takes ${allow.join(", ")}`,
            req.id,
          )
        : problemOf("not_found", `no route for ${req.method} ${req.url}`, req.id);
    if (allow.length > 0) reply.header("allow", allow.join(", "));
    return reply.code(p.status).type("application/problem+json").send(JSON.stringify(p.body));
  });
  app.setErrorHandler(async (err: Error & { statusCode?: number; code?: string }, req, reply) => {
    const p =
      err.code === "FST_ERR_CTP_BODY_TOO_LARGE"
        ? problemOf(
            "payload_too_large",
            `the body must be at most ${req.routeOptions.bodyLimit ?? bodyLimitBytes} bytes`,
            req.id,
          )
        : err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500
          ? problemOf("invalid_argument", err.message, req.id)
          : problemFor(err, req.id);
    if (p.status >= 500) req.log.error({ err }, "request failed");
    return reply
      .code(p.status)
      .headers(p.headers)
      .type("application/problem+json")
      .send(JSON.stringify(p.body));
  });
}
