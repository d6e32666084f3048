/**
 * Every row of the authorization matrix, enforced on a real server: each RPC is called with each
 * kind of credential, and must be refused exactly when the matrix says so, with the right code.
 */
import { create, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health } from "../../gen/grpc/health/v1/health_pb.ts";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.ts";
import { ServerReflection as ServerReflectionAlpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.ts";
import { mintCredential } from "../../src/domain/credentials.ts";
import type { Principal } from "../../src/domain/principal.ts";
import { allows, type Grant, matrix, rpcName } from "../../src/server/authz.ts";
import { heraldServices } from "../../src/services/index.ts";
import { sql } from "../helpers/db.ts";
import { addKey, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

const services: DescService[] = [...heraldServices, Health];
const methods = services.flatMap((s) => s.methods);
/** Bidirectional streams, which the HTTP/1.1 calls below cannot make: grpc-protocol.test.ts calls them. */
const bidiMethods = [ServerReflection, ServerReflectionAlpha].flatMap((s) => s.methods);

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 100 });
});
afterAll(async () => server.close());

type Caller = {
  name: string;
  /** The principal the server would see, or undefined when the credential must not verify. */
  principal?: Principal;
  secret: () => Promise<string | undefined>;
};

async function cliToken(): Promise<string> {
  const res = await fetch(`${server.url}/v1/auth/login`, {
    method: "POST",
    body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
  });
  return ((await res.json()) as { token: string }).token;
}

async function deviceCredential(): Promise<string> {
  const res = await fetch(`${server.url}/v1/devices/sign-in`, {
    method: "POST",
    body: JSON.stringify({
      password: { email: "owner@example.com", password: ownerPassword },
      name: "phone",
      platform: "ios",
    }),
  });
  return ((await res.json()) as { device_credential: string }).device_credential;
}

const base = { credentialId: "", accountId: "" };
const callers: Caller[] = [
  { name: "no credential", secret: async () => undefined },
  {
    name: "API key (write)",
    principal: { kind: "apiKey", ...base, projectId: "", scopes: ["write"] },
    secret: async () => (await addKey(server, server.projectId, ["write"])).apiKey,
  },
  {
    name: "API key (read)",
    principal: { kind: "apiKey", ...base, projectId: "", scopes: ["read"] },
    secret: async () => (await addKey(server, server.projectId, ["read"])).apiKey,
  },
  { name: "CLI token", principal: { kind: "cliToken", ...base }, secret: cliToken },
  {
    name: "revoked API key",
    secret: async () => {
      const { apiKey, keyId } = await addKey(server, server.projectId, ["write", "read"]);
      await sql(server.databaseUrl, "update api_key set revoked_at = now() where id = $1", [keyId]);
      return apiKey;
    },
  },
  {
    name: "revoked CLI token",
    secret: async () => {
      const token = await cliToken();
      await sql(
        server.databaseUrl,
        "update cli_token set revoked_at = now() where display_prefix = $1",
        [`${token.slice(0, 7)}…`],
      );
      return token;
    },
  },
  {
    name: "key with a wrong checksum",
    secret: async () => {
      const good = (await addKey(server, server.projectId, ["write", "read"])).apiKey;
      return good.slice(0, -1) + (good.endsWith("A") ? "B" : "A");
    },
  },
  {
    name: "device credential",
    principal: { kind: "device", ...base },
    secret: deviceCredential,
  },
  {
    name: "signed-out device credential",
    secret: async () => {
      const credential = await deviceCredential();
      await fetch(`${server.url}/v1/device/sign-out`, {
        method: "POST",
        headers: { authorization: `Bearer ${credential}` },
        body: "{}",
      });
      return credential;
    },
  },
  { name: "unknown device credential", secret: async () => mintCredential("device") },
];

async function call(method: DescMethod, secret: string | undefined): Promise<Code | "ok"> {
  const client = createClient(
    method.parent,
    createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
  ) as unknown as Record<string, (req: unknown, opts: unknown) => Promise<unknown>>;
  const headers: Record<string, string> = secret ? { authorization: `Bearer ${secret}` } : {};
  try {
    const result = client[method.localName]?.(create(method.input, {}), { headers });
    if (method.methodKind === "server_streaming") {
      // A stream answers on its first message (a keepalive at the latest).
      for await (const _ of result as unknown as AsyncIterable<unknown>) break;
    } else {
      await result;
    }
    return "ok";
  } catch (e) {
    return ConnectError.from(e).code;
  }
}

describe("the matrix", () => {
  it("has a row for every RPC the server serves, and nothing else", () => {
    expect(Object.keys(matrix).sort()).toEqual([...methods, ...bidiMethods].map(rpcName).sort());
  });
});

describe.each(methods.map((m) => [rpcName(m), m] as const))("%s", (_name, method) => {
  const grants = matrix[rpcName(method)] as readonly Grant[];
  const isPublic = grants.some((g) => g.kind === "public");
  it.each(callers.map((c) => [c.name, c] as const))("with %s", async (_caller, caller) => {
    const code = await call(method, await caller.secret());
    if (isPublic) {
      // Credentials are irrelevant: only validation or the call itself can fail.
      expect([Code.Unauthenticated, Code.PermissionDenied]).not.toContain(code);
      return;
    }
    if (!caller.principal) {
      expect(code).toBe(Code.Unauthenticated);
    } else if (allows(grants, caller.principal)) {
      expect([Code.Unauthenticated, Code.PermissionDenied]).not.toContain(code);
    } else {
      expect(code).toBe(Code.PermissionDenied);
    }
  });
});
