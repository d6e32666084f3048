/**
 * Receipts of several notifications at once (InboxService.ConfirmReceipts): a device coming
 * back to a backlog, `herald listen` after a night away, confirms up to 300 in one call where it
 * made one call each, every one of them a request of its credential's and its account's rate
 * limits (so a device catching up took the account's publishers' requests).
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  ConfirmReceiptsRequest,
  ConfirmReceiptsResponseSchema,
} from "../../gen/herald/v1/inbox_service_pb.ts";
import type { DeliveryRepository } from "../db/index.ts";
import { principalOf } from "./scope.ts";

export interface ReceiptDeps {
  deliveries: DeliveryRepository;
  /** Whether the notification is the calling device's (waiting for a fan-out under way). */
  belongs: (ctx: HandlerContext, id: string) => Promise<boolean>;
}

export function createConfirmReceipts(deps: ReceiptDeps) {
  return async (
    req: ConfirmReceiptsRequest,
    ctx: HandlerContext,
  ): Promise<MessageInitShape<typeof ConfirmReceiptsResponseSchema>> => {
    const { credentialId: deviceId, accountId } = principalOf(ctx);
    const { deliveries } = deps;
    const missing = await deliveries.markManyDelivered(deviceId, req.ids);
    if (missing.length === 0) return { unknownIds: [] };
    // Of those, the account's own still waiting for their fan-out (handed to a stream in memory
    // before it) are waited for one by one, as AckNotification waits. The others are looked for
    // once more, together (a fan-out may have committed since), and not one by one: ids of
    // nobody's cost this call three statements, not three each.
    const waiting = new Set(await deliveries.awaitingFanOut(accountId, missing));
    const unknown = await deliveries.markManyDelivered(
      deviceId,
      missing.filter((id) => !waiting.has(id)),
    );
    const late = await Promise.all(
      [...waiting].map(async (id) => {
        if (!(await deps.belongs(ctx, id))) return id;
        await deliveries.markByDevice(deviceId, id, "delivered");
        return undefined;
      }),
    );
    return { unknownIds: [...unknown, ...late.filter((id) => id !== undefined)] };
  };
}
