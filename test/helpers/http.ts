import { ConnectError } from "@connectrpc/connect";

/** A parsed JSON answer, loosely typed: tests assert on its shape. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions inspect arbitrary JSON.
export type JsonBody = Record<string, any>;

export async function body(res: Response): Promise<JsonBody> {
  return (await res.json()) as JsonBody;
}

/**
 * Whether a credential is refused now (401), asked with a publish that is invalid if it is not
 * (400): a probe that changes nothing, for waiting on a revocation to reach every cache.
 */
export async function refusedAt(url: string, credential: string): Promise<boolean> {
  const res = await fetch(`${url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${credential}` },
    body: "{}",
  });
  return res.status === 401;
}

/** The ConnectError a call fails with; fails the test if the call succeeds. */
export async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("expected the call to fail");
}

/** A notification as its sender reads it (GET /v1/notifications/{id}) with `token`. */
export async function notificationOf(url: string, token: string, id: string): Promise<JsonBody> {
  return body(
    await fetch(`${url}/v1/notifications/${id}`, { headers: { authorization: `Bearer ${token}` } }),
  );
}

/** A notification's device deliveries, read as its sender reads them. */
export async function deviceDeliveries(
  url: string,
  token: string,
  id: string,
): Promise<{ device_id: string; platform: string; state: string }[]> {
  return (await notificationOf(url, token, id)).device_deliveries;
}

/** A service's calls the server answered so far (its /metrics), by method, any protocol and outcome. */
export async function rpcCalls(url: string, service: string): Promise<Record<string, number>> {
  const calls: Record<string, number> = {};
  const text = await (await fetch(`${url}/metrics`)).text();
  const series = new RegExp(
    `^herald_rpcs_total\\{rpc="herald\\.v1\\.${service}/(\\w+)".* (\\d+)$`,
    "gm",
  );
  for (const m of text.matchAll(series)) {
    calls[m[1] as string] = (calls[m[1] as string] ?? 0) + Number(m[2]);
  }
  return calls;
}
