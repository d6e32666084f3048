/**
 * Herald's Connect router: Connect, gRPC and gRPC-Web on every method, as Connect's
 * `createConnectRouter` makes, with unary calls served by Herald's handlers (gRPC: unary.ts;
 * Connect-protocol POSTs: connect-unary.ts), and each unary method's implementation kept for the
 * REST shim.
 */
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
} from "@connectrpc/connect";
import {
  createUniversalMethodHandler,
  createUniversalServiceHandlers,
  type UniversalHandler,
  type UniversalHandlerOptions,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import { createHandlerFactory as grpcWebFactory } from "@connectrpc/connect/protocol-grpc-web";
import { createConnectHandlerFactory } from "./connect-unary.ts";
import { createGrpcHandlerFactory, type UnarySpec } from "./unary.ts";

type Spec = Parameters<ReturnType<typeof createGrpcHandlerFactory>>[0];

/** A Connect router that also keeps each unary method's implementation, for the REST shim. */
export type HeraldRouter = ConnectRouter & {
  /** By request path (`/herald.v1.NotifyService/Notify`). */
  unary: ReadonlyMap<string, UnarySpec>;
};

/**
 * A Connect router (Connect, gRPC, gRPC-Web on every method, as `createConnectRouter` makes)
 * whose gRPC unary methods take the handler above, and Connect-protocol unary POSTs
 * connect-unary.ts's.
 */
export function createRouter(options: Partial<UniversalHandlerOptions>): HeraldRouter {
  const opt = validateUniversalHandlerOptions(options);
  const protocols = [
    createGrpcHandlerFactory(opt),
    grpcWebFactory(opt),
    createConnectHandlerFactory(opt),
  ];
  const handlers: UniversalHandler[] = [];
  const unary = new Map<string, UnarySpec>();
  const keep = (spec: Spec) => {
    if (spec.kind === "unary")
      unary.set(`/${spec.method.parent.typeName}/${spec.method.name}`, spec);
  };
  const router: HeraldRouter = {
    handlers,
    unary,
    service(service, implementation) {
      const spec = createServiceImplSpec(service, implementation);
      for (const m of Object.values(spec.methods)) keep(m);
      handlers.push(...createUniversalServiceHandlers(spec, protocols));
      return router;
    },
    rpc(method, implementation) {
      const spec = createMethodImplSpec(method, implementation as never);
      keep(spec);
      handlers.push(createUniversalMethodHandler(spec, protocols));
      return router;
    },
  };
  return router;
}
