/**
 * The REST shim's HTTP mapping of successful calls: which RPCs answer other than 200, and with
 * which `Location`. The services return data only; RPC surfaces always answer 200 on success.
 * A replayed publish (NotifyResponse.replayed, the use case's typed outcome) answers 200: nothing new was
 * created.
 */

interface Success {
  status: number;
  /** The created resource's path, from the response message. */
  location?: (response: Record<string, unknown>) => string;
}

const notificationOf = (r: Record<string, unknown>) =>
  `/v1/notifications/${(r.notification as { id: string } | undefined)?.id}`;

const table: Record<string, Success> = {
  "herald.v1.NotifyService/Notify": { status: 202, location: notificationOf },
  "herald.v1.AccountService/SignUp": { status: 201, location: () => "/v1/account" },
  "herald.v1.AuthService/Login": { status: 201 },
  "herald.v1.ProjectService/CreateProject": {
    status: 201,
    location: (r) => `/v1/projects/${(r.project as { id: string }).id}`,
  },
  "herald.v1.ApiKeyService/CreateApiKey": { status: 201 },
  "herald.v1.HookService/CreateHook": { status: 201 },
  "herald.v1.DeviceService/SignInDevice": { status: 201 },
  "herald.v1.DeviceService/CreatePairingCode": { status: 201 },
  "herald.v1.DeviceService/SendTestNotification": {
    status: 202,
    location: (r) => `/v1/notifications/${r.notificationId as string}`,
  },
};

/** The status a first, successful REST call of `rpc` answers with. */
export function successStatus(rpc: string): number {
  return table[rpc]?.status ?? 200;
}

/** The status and `Location` of a REST answer to a successful call of `rpc`. */
export function restSuccess(rpc: string, response: object): { status: number; location?: string } {
  const entry = table[rpc];
  if (!entry) return { status: 200 };
  const location = entry.location?.(response as Record<string, unknown>);
  const replayed = (response as { replayed?: unknown }).replayed === true;
  return { status: replayed ? 200 : entry.status, ...(location ? { location } : {}) };
}
