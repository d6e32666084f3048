/**
 * The SDK's two transports (src/sdk/grpc-transport.ts, connect-transport.ts) against Connect-node's
 * over the same protocol, on a real server: the same answers and the same errors (code, message,
 * details, metadata), and streaming calls carried through. Misbehaving servers:
 * sdk-grpc-transport.test.ts and sdk-connect-transport.test.ts.
 */
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { createSdkConnectTransport } from "../../src/sdk/connect-transport.ts";
import { createSdkGrpcTransport } from "../../src/sdk/grpc-transport.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { compare } from "../helpers/transports.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

const auth = () => ({ authorization: `Bearer ${server.apiKey}` });

describe.each([
  {
    protocol: "gRPC",
    topic: "watched-grpc",
    theirs: (baseUrl: string): Transport => createGrpcTransport({ baseUrl }),
    ours: createSdkGrpcTransport,
  },
  {
    protocol: "Connect over HTTP/1.1",
    topic: "watched-connect",
    theirs: (baseUrl: string): Transport => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
    ours: createSdkConnectTransport,
  },
])("the SDK's $protocol transport against a real server", (transports) => {
  it("answers a publish as Connect-node's transport does", async () => {
    for (const [name, make] of [
      ["theirs", transports.theirs],
      ["ours", transports.ours],
    ] as const) {
      const client = createClient(NotifyService, make(server.url));
      let requestId: string | null = null;
      const res = await client.notify(
        { title: `via ${name}`, topic: "transports" },
        { headers: auth(), onHeader: (h) => (requestId = h.get("request-id")) },
      );
      expect(res.notification?.title).toBe(`via ${name}`);
      expect(res.notification?.topic).toBe("transports");
      expect(requestId).toMatch(/^req_/);
    }
  });

  it("throws the same errors: invalid fields with their details, an unknown credential", async () => {
    const invalid = await compare(transports, server.url, (t) =>
      createClient(NotifyService, t).notify({ title: "x".repeat(121) }, { headers: auth() }),
    );
    expect(invalid.ours).toEqual(invalid.theirs);
    expect(invalid.ours).toMatchObject({ code: "InvalidArgument" });
    expect(invalid.ours.details).toContain("google.rpc.BadRequest");
    const unknown = await compare(transports, server.url, (t) =>
      createClient(NotifyService, t).notify(
        { title: "x" },
        { headers: { authorization: `Bearer hk_${"a".repeat(38)}` } },
      ),
    );
    expect(unknown.ours).toEqual(unknown.theirs);
    expect(unknown.ours).toMatchObject({ code: "Unauthenticated" });
    expect(unknown.ours.metadata).toContain("www-authenticate");
  });

  it("carries a server-streaming call (WatchNotifications) through Connect-node's", async () => {
    const client = createClient(NotifyService, transports.ours(server.url));
    const { topic } = transports;
    await client.notify({ title: "watched", topic }, { headers: auth() });
    const abort = new AbortController();
    for await (const page of client.watchNotifications(
      { topic, pageSize: 5 },
      { headers: auth(), signal: abort.signal },
    )) {
      expect(page.notifications.map((n) => n.title)).toContain("watched");
      abort.abort();
      break;
    }
  });
});
