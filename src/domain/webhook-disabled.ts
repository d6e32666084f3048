/**
 * What an account's devices are told when one of its webhook endpoints is disabled (its
 * failures in a row reached HERALD_WEBHOOK_DISABLE_AFTER): a notification in the endpoint's
 * project, topic `herald`, written in the same statement that disables it, so it is neither
 * lost nor sent twice whatever process dies. Before, only the endpoint's row and the serving
 * process's log said so, and an account's integrations stopped with nobody told.
 *
 * The endpoint is named by its description, its origin and its id, never its whole URL: a path
 * or query may hold a secret, and a push's text passes through Apple's, Google's and the
 * browsers' push services.
 */
import { create } from "@bufbuild/protobuf";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import { type NotificationRecord, recordOf } from "./notification.ts";

/** The topic Herald's own notices about the account go to. */
export const noticeTopic = "herald";

export interface DisabledEndpoint {
  id: string;
  projectId: string;
  url: string;
  description: string;
}

/** At most `n` code points of `s`, with an ellipsis when cut. */
const cut = (s: string, n: number) => {
  const points = [...s];
  return points.length <= n ? s : `${points.slice(0, n - 1).join("")}…`;
};

/** The notice for `e`, disabled after `failures` failed attempts in a row, the last `lastError`. */
export function webhookDisabledNotice(
  e: DisabledEndpoint,
  failures: number,
  lastError: string,
  now: Date,
): NotificationRecord {
  const origin = URL.parse(e.url)?.origin ?? "";
  const name = e.description ? `“${cut(e.description, 200)}” (${origin})` : origin;
  const request = create(NotifyRequestSchema, {
    topic: noticeTopic,
    title: "A webhook endpoint was disabled",
    message:
      `${name} failed ${failures} attempts in a row; the last: ${cut(lastError, 500)}. ` +
      `Its events wait for it until it is enabled again: herald webhooks enable ${e.id}, or ` +
      "the console's Webhooks page.",
  });
  return recordOf(request, e.projectId, now, { escalateProjectId: null, scale: 1 });
}
