/**
 * Errors that say what to do: the list of allowed values (with a suggestion), the scope a key
 * lacks and how to get it, field violations in the gRPC status message itself, and a page behind
 * every problem's `type` link.
 */
import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import { newAccount } from "../helpers/accounts.ts";
import { addKey, notify, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

describe("errors that say what to do", () => {
  it("an unknown priority lists the three values and suggests one", async () => {
    const res = await notify(server, { title: "t", priority: "urgent" });
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([
      { field: "priority", message: 'must be one of low, normal, high (for "urgent", use high)' },
    ]);
    const odd = await notify(server, { title: "t", priority: "purple" });
    expect(odd.json.errors).toEqual([
      { field: "priority", message: "must be one of low, normal, high" },
    ]);
  });

  it("a topic, a replace key or an action id out of its characters is told them in words", async () => {
    const res = await notify(server, {
      title: "t",
      topic: "Deploys",
      replace_key: "web server",
      actions: [{ id: "ok!", label: "OK" }],
    });
    expect(res.status).toBe(400);
    // Before: `does not match regex pattern ^[a-z0-9_-]{0,64}$`, the proto's pattern as it is.
    expect(res.json.errors).toEqual([
      {
        field: "topic",
        message:
          'must be at most 64 characters, each a lowercase letter, a digit, "_" or "-" (for "Deploys", use "deploys")',
      },
      {
        field: "actions[0].id",
        message: 'must be 1 to 64 characters, each a letter, a digit, "_", "." or "-"',
      },
      {
        field: "replace_key",
        message: 'must be 1 to 64 characters, each a lowercase letter, a digit, "_" or "-"',
      },
    ]);
  });

  it("a project name is told its characters and its first one", async () => {
    const { token } = await newAccount(server, "names@example.com");
    const res = await fetch(`${server.url}/v1/projects`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Deploy-Bot" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: unknown }).errors).toEqual([
      {
        field: "name",
        message:
          'must be 1 to 63 characters, each a lowercase letter, a digit, "_" or "-", the first a lowercase letter or a digit (for "Deploy-Bot", use "deploy-bot")',
      },
    ]);
  });

  it("a click_url of another scheme is told so once", async () => {
    const res = await notify(server, { title: "t", click_url: "ftp://example.com/x" });
    expect(res.status).toBe(400);
    // Before: twice, by the proto's rule and again by the public-URL rule.
    expect(res.json.errors).toEqual([
      { field: "click_url", message: "must be an http or https URL" },
    ]);
  });

  it("a write-only key reading history is told the scope it lacks and how to get one", async () => {
    const { apiKey } = await addKey(server, server.projectId, ["write"]);
    const res = await fetch(`${server.url}/v1/notifications`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toBe(
      "this API key lacks the `read` scope this call needs: use a key with it (herald keys create NAME --scope read) or a CLI token (herald login)",
    );
  });

  it("over gRPC, the status message itself names every bad field", async () => {
    const client = createClient(NotifyService, createGrpcTransport({ baseUrl: server.url }));
    const err = await client
      .notify(
        { title: " ", priority: "urgent" },
        { headers: { authorization: `Bearer ${server.apiKey}` } },
      )
      .catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).rawMessage).toBe(
      'invalid request: priority must be one of low, normal, high (for "urgent", use high); title must not be blank',
    );
  });

  it("every problem's type link leads to the catalogue", async () => {
    const res = await notify(server, { title: "" });
    const type = res.json.type as string;
    expect(type).toBe("/docs/errors#invalid_argument");
    const page = await fetch(`${server.url}${type.split("#")[0]}`);
    expect(page.status).toBe(200);
    const html = await page.text();
    for (const code of [
      "invalid_argument",
      "unauthenticated",
      "quota_exceeded",
      "idempotency_key_reused",
    ]) {
      expect(html).toContain(`id="${code}"`);
    }
  });
});
