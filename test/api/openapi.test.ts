/**
 * GET /v1/openapi.json: a valid OpenAPI 3.1 document (checked by an independent validator) that
 * describes exactly the REST routes the shim serves, and whose schemas match real answers.
 */

import { getOption, hasOption } from "@bufbuild/protobuf";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http } from "../../gen/google/api/annotations_pb.ts";
import { heraldServices as services } from "../../src/services/index.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Record<string, unknown>>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
};

let server: TestServer;
let doc: Doc;
beforeAll(async () => {
  server = await startServer();
  const res = await fetch(`${server.url}/v1/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = (await res.json()) as Doc;
});
afterAll(async () => server.close());

describe("the OpenAPI description", () => {
  it("is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
  });

  it("describes routes the server serves, one per google.api.http binding", () => {
    const described = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((verb) => ({
        method: verb.toUpperCase() as "GET",
        url: path.replace(/\{(\w+)\}/g, ":$1"),
      })),
    );
    for (const route of described) expect(server.app.hasRoute(route), route.url).toBe(true);
    // Every binding of every annotated unary RPC, counted from the descriptors themselves.
    const annotated = services
      .flatMap((s) => s.methods)
      .filter((m) => m.methodKind === "unary" && hasOption(m, http))
      .flatMap((m) => {
        const rule = getOption(m, http);
        return [rule, ...rule.additionalBindings];
      });
    expect(described.length).toBe(annotated.length);
  });

  it("describes POST /v1/notify as the shim answers it", async () => {
    const op = doc.paths["/v1/notify"]?.post as Record<string, unknown>;
    expect(Object.keys(op.responses as object)).toEqual(["202", "default"]);
    expect(op.security).toEqual([{ bearer: [] }]);
    // A publish needs its body; a POST elsewhere may have none (an empty request).
    expect((op.requestBody as { required: boolean }).required).toBe(true);
    const signOut = doc.paths["/v1/device/sign-out"]?.post as {
      requestBody: { required: boolean };
    };
    expect(signOut.requestBody.required).toBe(false);
    expect((op.parameters as { name: string }[]).map((p) => p.name)).toContain("Idempotency-Key");
    const request = doc.components.schemas["herald.v1.NotifyRequest"];
    expect(Object.keys(request?.properties ?? {})).toEqual(
      expect.arrayContaining(["title", "message", "topic", "priority", "click_url", "metadata"]),
    );
    // A real answer has exactly the properties the response schema names.
    const res = await notify(server, { title: "described" });
    expect(res.status, res.text).toBe(202);
    const notification = doc.components.schemas["herald.v1.Notification"];
    expect(Object.keys(res.json).sort()).toEqual(
      Object.keys(notification?.properties ?? {}).sort(),
    );
  });

  it("marks the public calls as needing no credential", () => {
    expect(doc.paths["/v1/auth/login"]?.post?.security).toEqual([]);
    expect(doc.paths["/v1/projects"]?.get?.security).toEqual([{ bearer: [] }]);
  });
});
