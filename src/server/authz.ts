/**
 * The authorization matrix: for every RPC, which credentials may call it. One table, read by
 * the auth interceptor; docs/auth.md mirrors it. An RPC missing here is refused (fail closed).
 */
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Principal } from "../domain/principal.ts";

export type Grant =
  /** No credential needed (sign-up and the login steps). */
  | { kind: "public" }
  /** A project API key holding the scope. */
  | { kind: "apiKey"; scope: "write" | "read" }
  /** A CLI token: acts for its whole account. */
  | { kind: "cliToken" }
  /** A device credential: manages its own device and receives. */
  | { kind: "device" };

const publicCall: Grant[] = [{ kind: "public" }];
const owner: Grant[] = [{ kind: "cliToken" }];
const writer: Grant[] = [{ kind: "apiKey", scope: "write" }, { kind: "cliToken" }];
const reader: Grant[] = [{ kind: "apiKey", scope: "read" }, { kind: "cliToken" }];
const device: Grant[] = [{ kind: "device" }];

export const matrix: Record<string, readonly Grant[]> = {
  // The gRPC protocol's own services, open like GET /readyz (the schema is public in proto/).
  "grpc.health.v1.Health/Check": publicCall,
  "grpc.health.v1.Health/Watch": publicCall,
  "grpc.health.v1.Health/List": publicCall,
  "grpc.reflection.v1.ServerReflection/ServerReflectionInfo": publicCall,
  "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": publicCall,
  "herald.v1.NotifyService/Notify": writer,
  "herald.v1.NotifyService/GetNotification": reader,
  "herald.v1.NotifyService/CancelNotification": writer,
  "herald.v1.NotifyService/WaitForResponse": reader,
  "herald.v1.WebhookService/CreateWebhookEndpoint": writer,
  "herald.v1.WebhookService/ListWebhookEndpoints": reader,
  "herald.v1.WebhookService/DeleteWebhookEndpoint": writer,
  "herald.v1.WebhookService/EnableWebhookEndpoint": writer,
  "herald.v1.WebhookService/RotateWebhookSecret": writer,
  "herald.v1.WebhookService/ListWebhookAttempts": reader,
  "herald.v1.WebhookService/ReplayWebhookEvent": writer,
  "herald.v1.HookService/CreateHook": writer,
  "herald.v1.HookService/ListHooks": reader,
  "herald.v1.HookService/DeleteHook": writer,
  "herald.v1.HookService/RotateHookSecret": writer,
  "herald.v1.NotifyService/ListNotifications": reader,
  "herald.v1.NotifyService/WatchNotifications": reader,
  "herald.v1.AccountService/SignUp": publicCall,
  "herald.v1.AccountService/GetAccount": owner,
  "herald.v1.AccountService/GetUsage": reader,
  "herald.v1.AccountService/GetServerInfo": publicCall,
  "herald.v1.AccountService/CompleteOwnerSetup": publicCall,
  "herald.v1.AccountService/DescribeSetupLink": publicCall,
  "herald.v1.AccountService/ChangePassword": owner,
  "herald.v1.AccountService/DeleteAccount": owner,
  "herald.v1.AuthService/Login": publicCall,
  "herald.v1.AuthService/StartLogin": publicCall,
  "herald.v1.AuthService/PollLogin": publicCall,
  "herald.v1.AuthService/GetPendingLogin": owner,
  "herald.v1.AuthService/ApproveLogin": owner,
  "herald.v1.AuthService/DenyLogin": owner,
  "herald.v1.AuthService/Logout": owner,
  "herald.v1.AuthService/ListCliTokens": owner,
  "herald.v1.AuthService/RevokeCliToken": owner,
  "herald.v1.AuthService/StartSession": publicCall,
  "herald.v1.AuthService/EndSession": owner,
  "herald.v1.ProjectService/CreateProject": owner,
  "herald.v1.ProjectService/ListProjects": owner,
  "herald.v1.ProjectService/GetProject": owner,
  "herald.v1.ProjectService/RenameProject": owner,
  "herald.v1.ProjectService/DeleteProject": owner,
  "herald.v1.ProjectService/SetAcceptsEscalations": owner,
  "herald.v1.ApiKeyService/CreateApiKey": owner,
  "herald.v1.ApiKeyService/ListApiKeys": owner,
  "herald.v1.ApiKeyService/RevokeApiKey": owner,
  "herald.v1.DeviceService/SignInDevice": publicCall,
  "herald.v1.DeviceService/GetWebPushKey": publicCall,
  "herald.v1.DeviceService/CreatePairingCode": owner,
  "herald.v1.DeviceService/RegisterChannel": device,
  "herald.v1.DeviceService/SetTopicFilter": [{ kind: "cliToken" }, { kind: "device" }],
  "herald.v1.DeviceService/SignOutDevice": device,
  "herald.v1.DeviceService/ListDevices": owner,
  "herald.v1.DeviceService/RenameDevice": owner,
  "herald.v1.DeviceService/SetQuietHours": [{ kind: "cliToken" }, { kind: "device" }],
  "herald.v1.DeviceService/RemoveDevice": owner,
  "herald.v1.DeviceService/SendTestNotification": owner,
  "herald.v1.InboxService/Subscribe": device,
  "herald.v1.InboxService/FetchNotification": device,
  "herald.v1.InboxService/AckNotification": device,
  "herald.v1.InboxService/ConfirmReceipts": device,
  "herald.v1.InboxService/RespondToNotification": device,
  "herald.v1.InboxService/MarkOpened": device,
};

/**
 * `service/method`, made once per method: a call asks for it in five places (logging,
 * validation, the session cookie, authorization, the REST answer), and a name made afresh each
 * time is hashed afresh at each lookup (0.38-0.41 µs a call in a loop against 0.05 µs; BENCHMARKS.md).
 */
const rpcNames = new WeakMap<DescMethod, string>();

export function rpcName(method: DescMethod): string {
  let name = rpcNames.get(method);
  if (name === undefined) {
    name = `${method.parent.typeName}/${method.name}`;
    rpcNames.set(method, name);
  }
  return name;
}

/** gRPC's own health and reflection services (not Herald's API: not rate limited, logged at debug). */
export function isProtocolService(service: DescService): boolean {
  return service.typeName.startsWith("grpc.");
}

export function isPublic(grants: readonly Grant[]): boolean {
  return grants.some((g) => g.kind === "public");
}

/** Whether the principal may call the method. */
export function allows(grants: readonly Grant[], principal: Principal): boolean {
  return grants.some((g) => {
    if (g.kind === "public") return true;
    if (g.kind !== principal.kind) return false;
    if (g.kind === "apiKey")
      return principal.kind === "apiKey" && principal.scopes.includes(g.scope);
    return true;
  });
}
