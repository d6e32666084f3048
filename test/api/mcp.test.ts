/**
 * Herald's MCP server (issue 14), driven by the official MCP client over both transports:
 * `herald mcp` on stdio (a real child process) and `/mcp` over Streamable HTTP. An agent lists
 * the tools, sends, and asks a question that a stream device answers; a refusal is a tool error
 * a model can act on; `/mcp` wants a credential; no credential ever shows in tool output or
 * the stdio server's own messages; an agent that goes away mid-ask (its stdin closed, or SIGTERM)
 * leaves no question behind on the devices.
 */
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { body, type JsonBody } from "../helpers/http.ts";
import {
  capturedLog,
  defaultTestSenders,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { listen, signInStreamDevice } from "../helpers/streams.ts";
import { tempDir } from "../helpers/temp.ts";

let server: TestServer;
/** Everything the server logs, at debug level. */
const log = capturedLog("debug");
beforeAll(async () => {
  server = await startServer(
    { streamKeepaliveMs: 300 },
    defaultTestSenders(),
    (u) => u,
    log.logger,
  );
});
afterAll(async () => server.close());

const bin = fileURLToPath(new URL("../../bin/herald.mjs", import.meta.url));

type CallResult = {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: JsonBody;
};

async function connected(transport: Transport) {
  const client = new Client({ name: "herald-test-agent", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

const overHttp = () =>
  connected(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.apiKey}` } },
    }),
  );

function overStdio() {
  let stderr = "";
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: tempDir("herald-mcp-"),
      HERALD_URL: server.url,
      HERALD_API_KEY: server.apiKey,
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  return { client: connected(transport), stderr: () => stderr, transport };
}

/** A stream device, listening, that answers the first question it gets with `actionId`. */
async function answeringDevice(topic: string, actionId: string, afterMs = 0) {
  const dev = await signInStreamDevice(server.url, `answers ${topic}`, [topic]);
  const s = listen(server.url, dev.credential);
  await s.opened;
  const answered = (async () => {
    await s.until(() => s.ids.length > 0, 15_000);
    await new Promise((r) => setTimeout(r, afterMs));
    const res = await fetch(`${server.url}/v1/inbox/${s.ids[0]}/respond`, {
      method: "POST",
      headers: { authorization: `Bearer ${dev.credential}`, "content-type": "application/json" },
      body: JSON.stringify({ action_id: actionId }),
    });
    await s.stop();
    return { status: res.status, deviceId: dev.id };
  })();
  return { answered };
}

const question = (topic: string) => ({
  title: "Deploy api v42 to production?",
  topic,
  actions: [
    { id: "yes", label: "Deploy" },
    { id: "no", label: "Cancel" },
  ],
  timeout_seconds: 30,
});

describe.each([
  ["Streamable HTTP (/mcp)", () => ({ client: overHttp(), stderr: () => "" })],
  ["stdio (herald mcp)", overStdio],
])("over %s", (transportName, open) => {
  const topic = transportName.startsWith("stdio") ? "agent-stdio" : "agent-http";

  it("lists the tools, sends, asks (with progress) and reads back", async () => {
    const { client: pending, stderr } = open();
    const client = await pending;
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        "ask",
        "get_notification",
        "list_notifications",
        "notify",
      ]);
      const notifyTool = tools.find((t) => t.name === "notify");
      expect(notifyTool?.description).toContain("Only `title` is required");
      expect(JSON.stringify(notifyTool?.inputSchema)).toContain("1..120 characters");

      const sendOnce = async () =>
        (await client.callTool({
          name: "notify",
          arguments: {
            title: "Agent finished",
            message: "all 42 tests pass",
            topic,
            idempotency_key: `agent-run-${topic}`,
          },
        })) as CallResult;
      const sent = await sendOnce();
      // An agent retrying the call with its key gets the same notification, sent once.
      expect((await sendOnce()).structuredContent?.id).toBe(sent.structuredContent?.id);
      expect(sent.isError).toBeFalsy();
      const id = sent.structuredContent?.id as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const stored = await body(
        await fetch(`${server.url}/v1/notifications/${id}`, {
          headers: { authorization: `Bearer ${server.apiKey}` },
        }),
      );
      expect(stored).toMatchObject({ title: "Agent finished", topic });

      const device = await answeringDevice(`${topic}-ask`, "yes");
      const progress: string[] = [];
      const asked = (await client.callTool(
        { name: "ask", arguments: question(`${topic}-ask`) },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? ""), timeout: 60_000 },
      )) as CallResult;
      const answerer = await device.answered;
      expect(answerer.status).toBe(200);
      expect(asked.isError, asked.content[0]?.text).toBeFalsy();
      expect(asked.structuredContent).toMatchObject({
        outcome: "answered",
        action_id: "yes",
        device_id: answerer.deviceId,
      });
      expect(asked.content[0]?.text).toContain("The person answered: yes");
      expect(progress[0]).toContain("waiting for the person");

      const got = (await client.callTool({
        name: "get_notification",
        arguments: { id: asked.structuredContent?.notification_id },
      })) as CallResult;
      expect(got.structuredContent?.response).toMatchObject({ action_id: "yes" });
      const listed = (await client.callTool({
        name: "list_notifications",
        arguments: { topic, page_size: 5 },
      })) as CallResult;
      expect(listed.structuredContent?.notifications.map((n: JsonBody) => n.id)).toContain(id);

      // Nothing echoes the credential: not the tools' output, not the server's own messages.
      for (const r of [sent, asked, got, listed]) {
        expect(JSON.stringify(r)).not.toContain(server.apiKey);
      }
      expect(stderr()).not.toContain(server.apiKey);
      // The server logged the calls the tools made, and not the credential they made them with.
      expect(log.text()).toContain("herald.v1.NotifyService/WaitForResponse");
      expect(log.text()).not.toContain(server.apiKey);
      expect(log.text()).not.toContain(server.apiKey.slice(3, 20));
    } finally {
      await client.close();
    }
  });

  it("returns a refusal as a tool error naming the code, the field and what to do", async () => {
    const { client: pending } = open();
    const client = await pending;
    try {
      const r = (await client.callTool({
        name: "notify",
        arguments: { title: "t", click_url: "http://localhost:8080/x" },
      })) as CallResult;
      expect(r.isError).toBe(true);
      const text = r.content[0]?.text ?? "";
      expect(text).toContain("(invalid_argument)");
      expect(text).toContain("- click_url:");
      expect(text).toContain("Fix the fields named");
      const missing = (await client.callTool({
        name: "get_notification",
        arguments: { id: "01900000-0000-7000-8000-000000000000" },
      })) as CallResult;
      expect(missing.isError).toBe(true);
      expect(missing.content[0]?.text).toContain("(not_found)");
    } finally {
      await client.close();
    }
  });
});

describe("a long ask", () => {
  it("reports progress every 5 s, so a client whose timeout progress resets keeps waiting", async () => {
    const client = await overHttp();
    try {
      const device = await answeringDevice("slow-answer", "no", 12_000);
      const progress: number[] = [];
      const asked = (await client.callTool(
        { name: "ask", arguments: question("slow-answer") },
        undefined,
        {
          onprogress: (p) => progress.push(p.progress),
          timeout: 8_000,
          resetTimeoutOnProgress: true,
        },
      )) as CallResult;
      expect((await device.answered).status).toBe(200);
      expect(asked.structuredContent).toMatchObject({ outcome: "answered", action_id: "no" });
      expect(progress.length).toBeGreaterThanOrEqual(2);
      expect(progress.length).toBeGreaterThanOrEqual(3);
      expect(progress.at(-1)).toBeGreaterThanOrEqual(9);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe("an agent that goes away while it asks", () => {
  // An agent's MCP client ends its server by closing its standard input, or with SIGTERM.
  it.each([
    ["closes herald mcp's standard input", (t: StdioClientTransport) => t.close()],
    ["SIGTERMs herald mcp", (t: StdioClientTransport) => process.kill(t.pid as number, "SIGTERM")],
  ])(
    "withdraws the question when it %s",
    async (how, end) => {
      const topic = how.startsWith("closes") ? "agent-gone-stdin" : "agent-gone-sigterm";
      const dev = await signInStreamDevice(server.url, `sees ${topic}`, [topic]);
      const s = listen(server.url, dev.credential);
      await s.opened;
      const stdio = overStdio();
      const client = await stdio.client;
      const closed = new Promise((r) => {
        client.onclose = () => r(undefined);
      });
      const asked = client
        .callTool({ name: "ask", arguments: question(topic) })
        .catch((err: unknown) => err);
      try {
        await s.until(() => s.ids.length > 0, 15_000);
        await end(stdio.transport);
        await closed;
        // The call is not answered: its server is gone.
        expect(await asked).toBeInstanceOf(Error);
        const id = s.ids[0] as string;
        // Withdrawn by its asker (no device's id), not left for the person to answer into nothing.
        await s.until(() => s.cleared.includes(id), 10_000);
        expect(s.clearedBy.get(id)).toBe("");
        const n = await body(
          await fetch(`${server.url}/v1/notifications/${id}`, {
            headers: { authorization: `Bearer ${server.apiKey}` },
          }),
        );
        expect(n.status).toBe("canceled");
      } finally {
        await s.stop();
      }
    },
    30_000,
  );
});

describe("/mcp without a valid credential", () => {
  it("answers 401 with the reason, before any tool runs", async () => {
    const init = { jsonrpc: "2.0", id: 1, method: "tools/list" };
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
        body: JSON.stringify(init),
      });
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await body(none)).code).toBe("unauthenticated");
    const device = await signInStreamDevice(server.url, "not an agent");
    expect((await post({ authorization: `Bearer ${device.credential}` })).status).toBe(401);
    const unknown = `hk_${"A".repeat(43)}`;
    expect((await post({ authorization: `Bearer ${unknown}` })).status).toBe(401);

    const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`));
    await expect(connected(transport)).rejects.toThrow();
  });
});
