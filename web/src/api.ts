/**
 * The console's API: the generated clients over the Connect protocol, same origin. The session
 * is an HttpOnly cookie the browser sends by itself; page scripts never see a secret but the
 * ones shown once on purpose (a new API key).
 */
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { AccountService } from "../../gen/herald/v1/account_service_pb.ts";
import { ApiKeyService } from "../../gen/herald/v1/api_key_service_pb.ts";
import { AuthService } from "../../gen/herald/v1/auth_service_pb.ts";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { HookService } from "../../gen/herald/v1/hook_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { ProjectService } from "../../gen/herald/v1/project_service_pb.ts";
import { WebhookService } from "../../gen/herald/v1/webhook_service_pb.ts";

const transport = createConnectTransport({ baseUrl: location.origin });

export const api = {
  account: createClient(AccountService, transport),
  auth: createClient(AuthService, transport),
  projects: createClient(ProjectService, transport),
  keys: createClient(ApiKeyService, transport),
  devices: createClient(DeviceService, transport),
  notify: createClient(NotifyService, transport),
  inbox: createClient(InboxService, transport),
  webhooks: createClient(WebhookService, transport),
  hooks: createClient(HookService, transport),
};

/** Call options that act on one project (the `Herald-Project` header). */
export const inProject = (projectId: string) => ({ headers: { "herald-project": projectId } });

/** Call options with a device's credential (this browser as a receiving device). */
export const asDevice = (credential: string) => ({
  headers: { authorization: `Bearer ${credential}` },
});

export const date = (t: Timestamp | undefined) => (t ? timestampDate(t) : undefined);

/** What to tell a person about a failed call: the message and every invalid field. */
export function errorText(err: unknown): string {
  const e = ConnectError.from(err);
  const fields = e
    .findDetails(BadRequestSchema)
    .flatMap((b) => b.fieldViolations.map((v) => `${v.field} ${v.description}`));
  return fields.length > 0 ? `${e.rawMessage}: ${fields.join("; ")}` : e.rawMessage;
}

export const isSignedOut = (err: unknown) => ConnectError.from(err).code === 16;
