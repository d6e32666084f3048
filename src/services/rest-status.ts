import type { HandlerContext } from "@connectrpc/connect";
import { restExchangeKey } from "../server/context.ts";

/** Sets the HTTP status of the REST answer (e.g. 201 for a creation); RPC answers are unaffected. */
export function setRestStatus(ctx: HandlerContext, status: number, location?: string): void {
  const rest = ctx.values.get(restExchangeKey);
  if (!rest) return;
  rest.status = status;
  if (location) rest.headers.set("location", location);
}
