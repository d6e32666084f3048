/**
 * The same operations over gRPC (h2c, prior knowledge), Connect and gRPC-Web, through the
 * generated TypeScript client, on the same port as REST.
 */
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import {
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BadRequestSchema, ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { sql } from "../helpers/db.ts";
import { failure } from "../helpers/http.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

const transports: Record<string, (baseUrl: string) => Transport> = {
  grpc: (baseUrl) => createGrpcTransport({ baseUrl }),
  connect: (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }),
  "connect (binary, HTTP/2)": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }),
  "grpc-web": (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }),
  // Reads (no side effects) as Connect GETs, over both HTTP versions.
  "connect (GET for reads, HTTP/1.1)": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "1.1", useHttpGet: true }),
  "connect (GET for reads, HTTP/2)": (baseUrl) =>
    createConnectTransport({ baseUrl, httpVersion: "2", useHttpGet: true }),
};

describe.each(Object.entries(transports))("over %s", (name, make) => {
  const client = () => createClient(NotifyService, make(server.url));
  const auth = () => ({ authorization: `Bearer ${server.apiKey}` });

  it("publishes, reads back and lists", async () => {
    const res = await client().notify(
      {
        title: `hello ${name}`,
        topic: "rpc",
        priority: "high",
        metadata: { via: name },
        ttlSeconds: 60,
      },
      { headers: auth() },
    );
    const n = res.notification;
    expect(n?.title).toBe(`hello ${name}`);
    expect(n?.metadata).toEqual({ via: name });
    expect(n?.status).toBe("queued");
    const rows = await sql(server.databaseUrl, "select priority from notification where id = $1", [
      n?.id,
    ]);
    expect(rows).toEqual([{ priority: "high" }]);
    const got = await client().getNotification({ id: n?.id ?? "" }, { headers: auth() });
    expect(got.notification?.id).toBe(n?.id);
    const list = await client().listNotifications({ topic: "rpc" }, { headers: auth() });
    expect(list.notifications.map((x) => x.id)).toContain(n?.id);
  });

  it("replays on the idempotency-key metadata", async () => {
    const headers = { ...auth(), "idempotency-key": `rpc-${name}` };
    const first = await client().notify({ title: "once" }, { headers });
    let replayed: string | null = null;
    const again = await client().notify(
      { title: "once" },
      {
        headers,
        onHeader: (h) => {
          replayed = h.get("idempotent-replayed");
        },
      },
    );
    expect(again.notification?.id).toBe(first.notification?.id);
    expect(replayed).toBe("true");
    // The outcome is typed in the answer too: a client need not read headers.
    expect(first.replayed).toBe(false);
    expect(again.replayed).toBe(true);
  });

  it("reports invalid input with the stable code and every field violation", async () => {
    const err = await failure(
      client().notify(
        { title: "x".repeat(121), topic: "NOPE", ttlSeconds: 10 },
        { headers: auth() },
      ),
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("invalid_argument");
    const fields = err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field);
    expect(fields?.sort()).toEqual(["title", "topic", "ttl_seconds"]);
  });

  it("refuses a missing credential as unauthenticated", async () => {
    const err = await failure(client().notify({ title: "x" }));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("unauthenticated");
  });

  it("answers not_found for an unknown id", async () => {
    const err = await failure(
      client().getNotification({ id: "01a2025a-a98d-782b-9ac7-5b61847d6cfa" }, { headers: auth() }),
    );
    expect(err.code).toBe(Code.NotFound);
  });
});
