/**
 * A real Prometheus Alertmanager (Debian's prometheus-alertmanager) sends to an inbound hook
 * (issue 25): configured with the hook's URL and bearer secret, as docs/integrations.md says;
 * alerts pushed into its API fire, then resolve: a notification for each, the firing one high
 * (its severity is critical) and the resolved one normal, with the alerts' summaries, and
 * Alertmanager's external URL as the link.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { freePort } from "../helpers/ports.ts";
import { startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let alertmanager: ChildProcess | undefined;
const dir = mkdtempSync(join(tmpdir(), "herald-am-"));
const external = "http://alertmanager.example.com:9093";

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  if (alertmanager && alertmanager.exitCode === null) {
    const exited = new Promise((resolve) => alertmanager?.once("exit", resolve));
    alertmanager.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  await server.close();
});

/** Alertmanager with one route to the hook, grouping by alert name, sending at once. */
async function startAlertmanager(hookUrl: string, secret: string): Promise<string> {
  const config = join(dir, "alertmanager.yml");
  writeFileSync(
    config,
    `route:
  receiver: herald
  group_by: [alertname]
  group_wait: 100ms
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: herald
    webhook_configs:
      - url: ${hookUrl}
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: ${secret}
`,
  );
  const port = await freePort();
  let log = "";
  alertmanager = spawn(
    "prometheus-alertmanager",
    [
      `--config.file=${config}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--web.external-url=${external}`,
      "--cluster.listen-address=",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  alertmanager.stderr?.on("data", (d) => (log += d));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => (await fetch(`${url}/-/ready`).catch(() => undefined))?.ok === true,
    15_000,
  );
  const ready = await fetch(`${url}/-/ready`).catch(() => undefined);
  expect(ready?.ok, log).toBe(true);
  return url;
}

const titles = async (projectId: string) =>
  sql<{ title: string; priority: string; message: string; click_url: string | null }>(
    server.databaseUrl,
    "select title, priority, message, click_url from notification where project_id = $1 order by id",
    [projectId],
  );

describe("Alertmanager", () => {
  it("fires and resolves through the hook: one notification each", async () => {
    const res = await fetch(`${server.url}/v1/projects/-/hooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ kind: "alertmanager", name: "prod alerts", topic: "oncall" }),
    });
    const { hook, secret } = (await res.json()) as { hook: { url: string }; secret: string };
    const am = await startAlertmanager(hook.url, secret);
    const alert = {
      labels: { alertname: "HighLatency", severity: "critical", service: "api" },
      annotations: { summary: "p99 latency above 2 s on api" },
      generatorURL: "http://prometheus.example.com/graph",
    };
    const pushed = await fetch(`${am}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([alert]),
    });
    expect(pushed.status).toBe(200);
    await waitFor(async () => (await titles(server.projectId)).length >= 1, 20_000);
    const [firing] = await titles(server.projectId);
    expect(firing).toEqual({
      title: "[FIRING:1] HighLatency",
      priority: "high",
      message: "• p99 latency above 2 s on api",
      click_url: external,
    });

    // Resolved: the same alert with an end in the past.
    const ended = { ...alert, endsAt: new Date(Date.now() - 1000).toISOString() };
    await fetch(`${am}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([ended]),
    });
    await waitFor(async () => (await titles(server.projectId)).length >= 2, 20_000);
    const rows = await titles(server.projectId);
    expect(rows[1]).toMatchObject({ title: "[RESOLVED:1] HighLatency", priority: "normal" });
    const topics = await sql<{ topic: string }>(
      server.databaseUrl,
      "select distinct topic from notification where project_id = $1",
      [server.projectId],
    );
    expect(topics).toEqual([{ topic: "oncall" }]);
  });
});
