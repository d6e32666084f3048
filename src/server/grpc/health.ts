/**
 * grpc.health.v1.Health, the health protocol gRPC load balancers and Kubernetes' gRPC probes
 * speak: Check, Watch and List, for the whole server ("") and for each service it serves. Every
 * Herald service needs the database, so all share the process's readiness; the protocol's own
 * services (health, reflection) serve whenever the process answers at all.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "../../../gen/grpc/health/v1/health_pb.ts";
import type { Readiness } from "../readiness.ts";

export interface HealthOptions {
  readiness: Readiness;
  /** Full names of the services that need the database (herald.v1.*). */
  services: readonly string[];
  /** The protocol's own services, serving whenever the process answers. */
  alwaysServing: readonly string[];
  /** How often a Watch re-checks between the changes it is told of. */
  watchIntervalMs: number;
}

export function registerHealthService(router: ConnectRouter, opts: HealthOptions): void {
  const known = new Set(["", ...opts.services, ...opts.alwaysServing]);
  /** Every service's status from one readiness reading (the database's: read once per call). */
  const statusIn = (ready: boolean, service: string): Status => {
    if (!known.has(service)) return Status.SERVICE_UNKNOWN;
    if (opts.alwaysServing.includes(service) || ready) return Status.SERVING;
    return Status.NOT_SERVING;
  };
  const ready = async () => (await opts.readiness.problem()) === undefined;
  const status = async (service: string): Promise<Status> => statusIn(await ready(), service);
  const answer = (s: Status): HealthCheckResponse =>
    create(HealthCheckResponseSchema, { status: s });

  router.service(Health, {
    async check(req) {
      const s = await status(req.service);
      if (s === Status.SERVICE_UNKNOWN) {
        throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      }
      return answer(s);
    },
    async *watch(req, ctx) {
      let last = await status(req.service);
      yield answer(last);
      while (!ctx.signal.aborted) {
        await changeOrTick(opts, ctx.signal);
        const s = await status(req.service);
        if (s !== last) yield answer(s);
        last = s;
        // The process is going away: the watcher has heard NOT_SERVING and should reconnect
        // elsewhere; an open stream would only hold the shutdown up.
        if (opts.readiness.draining) return;
      }
    },
    async list() {
      const statuses: Record<string, HealthCheckResponse> = {};
      const now = await ready();
      for (const name of known) statuses[name] = answer(statusIn(now, name));
      return { statuses };
    },
  });
}

/** Resolves after the watch interval, at once when the process starts draining or the call ends. */
function changeOrTick(opts: HealthOptions, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      unsubscribe();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, opts.watchIntervalMs);
    const unsubscribe = opts.readiness.onDrain(done);
    signal.addEventListener("abort", done);
  });
}
