import { ConnectError } from "@connectrpc/connect";

/** A parsed JSON answer, loosely typed: tests assert on its shape. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions inspect arbitrary JSON.
export type JsonBody = Record<string, any>;

export async function body(res: Response): Promise<JsonBody> {
  return (await res.json()) as JsonBody;
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
