import { Migration0001Initial } from "./0001-initial.ts";
import { Migration0002Credentials } from "./0002-credentials.ts";
import { Migration0003Devices } from "./0003-devices.ts";
import { Migration0004Deliveries } from "./0004-deliveries.ts";
import { Migration0005Retention } from "./0005-retention.ts";
import { Migration0006Console } from "./0006-console.ts";
import { Migration0007Expiry } from "./0007-expiry.ts";
import { Migration0008RateBuckets } from "./0008-rate-buckets.ts";
import { Migration0009QuotaLedger } from "./0009-quota-ledger.ts";
import { Migration0010Schedules } from "./0010-schedules.ts";
import { Migration0011Webhooks } from "./0011-webhooks.ts";
import { Migration0012Acknowledgements } from "./0012-acknowledgements.ts";
import { Migration0013ClearPushes } from "./0013-clear-pushes.ts";
import { Migration0014Responses } from "./0014-responses.ts";
import { Migration0015WebhookFairness } from "./0015-webhook-fairness.ts";
import { Migration0016AccountLimits } from "./0016-account-limits.ts";
import { Migration0017ProjectEscalations } from "./0017-project-escalations.ts";
import { Migration0018LoginRequester } from "./0018-login-requester.ts";
import { Migration0019TokenOrigin } from "./0019-token-origin.ts";
import { Migration0020ServingProcesses } from "./0020-serving-processes.ts";
import { Migration0021CancelInFlight } from "./0021-cancel-in-flight.ts";
import { Migration0022Hooks } from "./0022-hooks.ts";

/** Every migration in order. Applied at start; never edited once committed. */
export const migrations = [
  { name: "0001-initial", class: Migration0001Initial },
  { name: "0002-credentials", class: Migration0002Credentials },
  { name: "0003-devices", class: Migration0003Devices },
  { name: "0004-deliveries", class: Migration0004Deliveries },
  { name: "0005-retention", class: Migration0005Retention },
  { name: "0006-console", class: Migration0006Console },
  { name: "0007-expiry", class: Migration0007Expiry },
  { name: "0008-rate-buckets", class: Migration0008RateBuckets },
  { name: "0009-quota-ledger", class: Migration0009QuotaLedger },
  { name: "0010-schedules", class: Migration0010Schedules },
  { name: "0011-webhooks", class: Migration0011Webhooks },
  { name: "0012-acknowledgements", class: Migration0012Acknowledgements },
  { name: "0013-clear-pushes", class: Migration0013ClearPushes },
  { name: "0014-responses", class: Migration0014Responses },
  { name: "0015-webhook-fairness", class: Migration0015WebhookFairness },
  { name: "0016-account-limits", class: Migration0016AccountLimits },
  { name: "0017-project-escalations", class: Migration0017ProjectEscalations },
  { name: "0018-login-requester", class: Migration0018LoginRequester },
  { name: "0019-token-origin", class: Migration0019TokenOrigin },
  { name: "0020-serving-processes", class: Migration0020ServingProcesses },
  { name: "0021-cancel-in-flight", class: Migration0021CancelInFlight },
  { name: "0022-hooks", class: Migration0022Hooks },
];
