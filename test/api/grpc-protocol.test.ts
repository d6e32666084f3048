/**
 * gRPC's own protocol services on Herald's port: grpc.health.v1 (Check, Watch, List; overall and
 * per service) and server reflection, driven by `buf curl`, a real client that knows no schema.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.ts";
import { sql } from "../helpers/db.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const run = promisify(execFile);
const buf = join(import.meta.dirname, "../../node_modules/.bin/buf");

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ healthWatchIntervalMs: 100 });
});
afterAll(async () => server.close());

const healthOf = (s: TestServer) => createClient(Health, createGrpcTransport({ baseUrl: s.url }));

async function bufCurl(args: string[]): Promise<string> {
  const { stdout } = await run(buf, [
    "curl",
    "--protocol",
    "grpc",
    "--http2-prior-knowledge",
    ...args,
  ]);
  return stdout;
}

describe("grpc.health.v1", () => {
  it("Check answers SERVING for the server and each service, without a credential", async () => {
    const health = healthOf(server);
    expect((await health.check({})).status).toBe(Status.SERVING);
    expect((await health.check({ service: "herald.v1.NotifyService" })).status).toBe(
      Status.SERVING,
    );
    const err = await health.check({ service: "nope.v1.Nothing" }).catch((e) => e);
    expect(ConnectError.from(err).code).toBe(Code.NotFound);
  });

  it("List names every service with its status", async () => {
    const { statuses } = await healthOf(server).list({});
    expect(Object.keys(statuses).sort()).toEqual(
      [
        "",
        "grpc.health.v1.Health",
        "herald.v1.AccountService",
        "herald.v1.ApiKeyService",
        "herald.v1.AuthService",
        "herald.v1.DeviceService",
        "herald.v1.HookService",
        "herald.v1.InboxService",
        "herald.v1.NotifyService",
        "herald.v1.ProjectService",
        "herald.v1.WebhookService",
      ].sort(),
    );
    expect(statuses[""]?.status).toBe(Status.SERVING);
  });

  it("Check says NOT_SERVING while a migration is missing; Health itself still serves", async () => {
    const other = await startServer();
    await sql(
      other.databaseUrl,
      "delete from herald_migrations where id = (select max(id) from herald_migrations)",
    );
    const health = healthOf(other);
    expect((await health.check({})).status).toBe(Status.NOT_SERVING);
    expect((await health.check({ service: "herald.v1.NotifyService" })).status).toBe(
      Status.NOT_SERVING,
    );
    expect((await health.check({ service: "grpc.health.v1.Health" })).status).toBe(Status.SERVING);
    await other.close();
  });

  it("Watch streams the status, NOT_SERVING as the server drains, and SERVICE_UNKNOWN", async () => {
    const other = await startServer({ healthWatchIntervalMs: 60_000 });
    const health = healthOf(other);
    const unknown = health.watch({ service: "nope" });
    for await (const res of unknown) {
      expect(res.status).toBe(Status.SERVICE_UNKNOWN);
      break;
    }
    const seen: number[] = [];
    const watching = (async () => {
      for await (const res of health.watch({})) {
        seen.push(res.status);
        if (seen.length === 1) void other.close();
        if (res.status === Status.NOT_SERVING) break;
      }
    })();
    await watching;
    // Told of the drain at once, not after the 60 s interval.
    expect(seen).toEqual([Status.SERVING, Status.NOT_SERVING]);
  });
});

describe("server reflection", () => {
  it("buf curl lists the services over v1 and v1alpha with no schema at hand", async () => {
    for (const protocol of ["grpc-v1", "grpc-v1alpha"]) {
      const out = await bufCurl(["--reflect-protocol", protocol, "--list-services", server.url]);
      const services = out.trim().split("\n").sort();
      expect(services).toEqual(
        expect.arrayContaining([
          "grpc.health.v1.Health",
          "grpc.reflection.v1.ServerReflection",
          "herald.v1.DeviceService",
          "herald.v1.NotifyService",
        ]),
      );
    }
  });

  it("buf curl calls Notify from the reflected schema, and lists its methods", async () => {
    const methods = await bufCurl(["--list-methods", server.url]);
    expect(methods.trim().split("\n")).toContain("herald.v1.NotifyService/Notify");
    const out = await bufCurl([
      "-H",
      `Authorization: Bearer ${server.apiKey}`,
      "-d",
      JSON.stringify({ title: "from buf curl", metadata: { build: 42 } }),
      `${server.url}/herald.v1.NotifyService/Notify`,
    ]);
    const { notification } = JSON.parse(out);
    expect(notification.title).toBe("from buf curl");
    expect(notification.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("buf curl asks grpc.health.v1 from the reflected schema", async () => {
    const out = await bufCurl(["-d", "{}", `${server.url}/grpc.health.v1.Health/Check`]);
    expect(JSON.parse(out)).toEqual({ status: "SERVING" });
  });

  it("is left out with HERALD_REFLECTION=0", async () => {
    const other = await startServer({ reflection: false });
    const err = await bufCurl(["--list-services", other.url]).catch((e: Error) => e);
    expect(String(err)).toMatch(/unimplemented|not implement|reflection/i);
    await other.close();
  });
});
