/** What a live stream says (InboxService.Subscribe): a notification, its replacement, a clear, a keepalive. */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, timestampNow } from "@bufbuild/protobuf/wkt";
import {
  type SubscribeResponse,
  SubscribeResponseSchema,
} from "../../gen/herald/v1/inbox_service_pb.ts";
import type { NotificationRecord } from "../domain/notification.ts";
import { notificationToProto } from "./mappers.ts";

export const notificationMessage = (row: NotificationRecord, quiet = false): SubscribeResponse =>
  create(SubscribeResponseSchema, {
    event: { case: "notification", value: notificationToProto(row) },
    quiet,
  });

export const replacedMessage = (id: string, by: NotificationRecord): SubscribeResponse =>
  create(SubscribeResponseSchema, {
    event: {
      case: "replaced",
      value: { id, replacedById: by.id, replaceKey: by.replace_key ?? "" },
    },
  });

export const clearedMessage = (id: string, byDeviceId: string): SubscribeResponse =>
  create(SubscribeResponseSchema, { event: { case: "cleared", value: { id, byDeviceId } } });

/** A keepalive, with the longest the stream stays silent (a client's watch for a dead one). */
export const keepaliveOf = (ms: number) => (): SubscribeResponse =>
  create(SubscribeResponseSchema, {
    event: { case: "keepalive", value: timestampNow() },
    keepaliveInterval: durationFromMs(ms),
  });
