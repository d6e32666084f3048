/**
 * A client in another language, generated without Node: `buf generate --template
 * buf.gen.python.yaml` from proto/ and third_party/proto/ with Debian's protoc and gRPC plugin.
 * The Python program publishes over gRPC and reads the error details of a refused call.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findPythonClientTools } from "../helpers/python.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");
const python = findPythonClientTools() as string;

let server: TestServer;
let out: string;
beforeAll(async () => {
  server = await startServer();
  out = mkdtempSync(join(tmpdir(), "herald-python-"));
  await run(
    join(root, "node_modules/.bin/buf"),
    ["generate", "--template", "buf.gen.python.yaml", "--output", out],
    { cwd: root },
  );
}, 120_000);
afterAll(async () => {
  await server.close();
  rmSync(out, { recursive: true, force: true });
});

describe("a Python client generated from proto/", () => {
  it("publishes over gRPC and reads ErrorInfo and BadRequest from a refusal", async () => {
    const { stdout } = await run(
      python,
      [join(root, "test/python/notify_client.py"), `127.0.0.1:${server.port}`, server.apiKey],
      { env: { ...process.env, PYTHONPATH: join(out, "gen-python") } },
    );
    const result = JSON.parse(stdout);
    expect(result.notification.title).toBe("From Python");
    expect(result.notification.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.refused).toMatchObject({
      code: "INVALID_ARGUMENT",
      reason: "invalid_argument",
      domain: "herald.dev",
      fields: ["topic"],
    });
    expect(result.refused.descriptions[0]).toMatch(
      /^must be at most 64 characters, each a lowercase letter/,
    );
    expect(result.unauthenticated).toMatchObject({
      code: "UNAUTHENTICATED",
      reason: "unauthenticated",
      domain: "herald.dev",
    });
    expect(result.health).toBe("SERVING");
    // The published notification is really there, with its metadata.
    const res = await fetch(`${server.url}/v1/notifications/${result.notification.id}`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { metadata: unknown }).metadata).toEqual({ build: 42 });
  });
});
