/** Stream devices in tests: sign one in, and listen to its live stream over gRPC. */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService, type SubscribeResponse } from "../../gen/herald/v1/inbox_service_pb.ts";
import { newAccount, type TestAccount } from "./accounts.ts";
import { ownerPassword, type TestServer } from "./server.ts";

export const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });

/** Signs in a stream device of the owner (or of `email`), with a topic filter if given. */
export async function signInStreamDevice(
  baseUrl: string,
  name: string,
  topics: string[] = [],
  email = "owner@example.com",
  password = ownerPassword,
) {
  const devices = createClient(
    DeviceService,
    createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  );
  const { deviceCredential, device } = await devices.signInDevice({
    method: { case: "password", value: { email, password } },
    name,
    platform: "stream",
  });
  if (topics.length) await devices.setTopicFilter({ topics }, bearer(deviceCredential));
  return { credential: deviceCredential, id: device?.id as string };
}

/** A new account with `count` stream devices signed in (named "<email> <i>"), and its devices. */
export async function withStreamDevices(
  server: TestServer,
  email: string,
  count: number,
): Promise<{ account: TestAccount; devices: { credential: string; id: string }[] }> {
  const account = await newAccount(server, email);
  const devices = [];
  for (let i = 0; i < count; i++) {
    devices.push(
      await signInStreamDevice(server.url, `${email} ${i}`, [], email, account.password),
    );
  }
  return { account, devices };
}

/** Collects notification titles from a live stream until `count` arrived or `ms` passed. */
export function listen(baseUrl: string, credential: string, since = "") {
  const abort = new AbortController();
  const titles: string[] = [];
  const ids: string[] = [];
  /** When each notification arrived (Date.now()), in order. */
  const arrivals: number[] = [];
  const cleared: string[] = [];
  /** Who cleared each (a device id; empty when its asker withdrew it). */
  const clearedBy = new Map<string, string>();
  /** Every notification and replacement, in order: `notification <id>`, `replaced <id> by <id>`. */
  const events: string[] = [];
  let keepalives = 0;
  // The server writes a keepalive at once, once the stream is registered: from then on,
  // everything published reaches it live.
  let markOpen = () => {};
  const opened = new Promise<void>((resolve) => {
    markOpen = resolve;
  });
  const inbox = createClient(InboxService, createGrpcTransport({ baseUrl }));
  const done = (async () => {
    try {
      for await (const msg of inbox.subscribe(
        { since },
        { ...bearer(credential), signal: abort.signal },
      )) {
        const m = msg as SubscribeResponse;
        markOpen();
        if (m.event.case === "notification") {
          titles.push(m.event.value.title);
          ids.push(m.event.value.id);
          arrivals.push(Date.now());
          events.push(`notification ${m.event.value.id}`);
        } else if (m.event.case === "replaced") {
          events.push(`replaced ${m.event.value.id} by ${m.event.value.replacedById}`);
        } else if (m.event.case === "cleared") {
          cleared.push(m.event.value.id);
          clearedBy.set(m.event.value.id, m.event.value.byDeviceId);
        } else keepalives++;
      }
    } catch {
      // aborted
    }
    markOpen();
  })();
  return {
    titles,
    ids,
    arrivals,
    events,
    cleared,
    clearedBy,
    keepalives: () => keepalives,
    /** Resolves once the stream is open (or ended without opening). */
    opened,
    async until(pred: () => boolean, ms = 5000) {
      const end = Date.now() + ms;
      while (!pred() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    },
    async stop() {
      abort.abort();
      await done;
    },
  };
}
