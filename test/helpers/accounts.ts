/** Accounts, devices and waiting for delivery, as the push tests need them. */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { body, type JsonBody, notificationOf } from "./http.ts";
import { ownerPassword, type TestServer } from "./server.ts";

export interface TestAccount {
  email: string;
  password: string;
  /** A CLI token of the account. */
  token: string;
}

/** Signs up an account and logs it in. */
export async function newAccount(
  server: { url: string },
  email: string,
  password = "a long test password",
): Promise<TestAccount> {
  await fetch(`${server.url}/v1/accounts`, {
    method: "POST",
    body: JSON.stringify({ email, password }),
  });
  return logIn(server, email, password);
}

/** The test server's owner, logged in. */
export const theOwner = (server: { url: string }) =>
  logIn(server, "owner@example.com", ownerPassword);

async function logIn(
  server: { url: string },
  email: string,
  password: string,
): Promise<TestAccount> {
  const { token } = await body(
    await fetch(`${server.url}/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ email, password }),
    }),
  );
  return { email, password, token: token as string };
}

type Channel =
  | { case: "pushToken"; value: string }
  | { case: "webPush"; value: { endpoint: string; p256dh: string; auth: string } };

/** Signs a device of the account in and registers its push channel. */
export async function pushDevice(
  server: { url: string },
  account: TestAccount,
  platform: "ios" | "android" | "web",
  channel: Channel,
): Promise<{ deviceId: string; credential: string }> {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
  );
  const { deviceCredential, device } = await devices.signInDevice({
    method: { case: "password", value: { email: account.email, password: account.password } },
    name: `${platform} device`,
    platform,
  });
  await devices.registerChannel(
    { channel },
    { headers: { authorization: `Bearer ${deviceCredential}` } },
  );
  return { deviceId: device?.id as string, credential: deviceCredential };
}

/** Polls a notification until no delivery is pending (or `ms` passed); returns it. */
export async function settled(
  server: TestServer,
  token: string,
  id: string,
  ms = 10_000,
): Promise<JsonBody> {
  const end = Date.now() + ms;
  for (;;) {
    const n = await notificationOf(server.url, token, id);
    if (!["queued", "delivering"].includes(n.status) || Date.now() > end) return n;
    await new Promise((r) => setTimeout(r, 50));
  }
}
