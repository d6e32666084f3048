/**
 * Inbound hooks (issue 25, item 1): managed over REST under the project's path, with a secret
 * shown once; GitHub's published example payloads (@octokit/webhooks-examples) signed with
 * @octokit/webhooks-methods, GitLab's and Grafana's documented examples (test/fixtures/hooks),
 * and any JSON through a Mustache template, each becoming the notification a person would want;
 * one 401 for an unknown hook and a wrong credential; 400 naming what a payload lacks; ignored
 * events answered 200; a sender's retries sending once; another project's key reaching nothing.
 * Alertmanager's own binary sends to a hook in test/senders/alertmanager.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import examples from "@octokit/webhooks-examples";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "../helpers/db.ts";
import { body, type JsonBody } from "../helpers/http.ts";
import { addProjectWithKey, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, "../fixtures/hooks", name), "utf8");

/** One of GitHub's published example payloads of an event, by action (and a test on it). */
function gitHubExample(event: string, pick: (e: JsonBody) => boolean): JsonBody {
  const found = (examples as unknown as { name: string; examples: JsonBody[] }[])
    .find((e) => e.name === event)
    ?.examples.find(pick);
  if (!found) throw new Error(`no example of ${event}`);
  return structuredClone(found);
}

async function api(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${init.key ?? server.apiKey}` },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: res.status, json: (await body(res)) as JsonBody };
}

async function createHook(kind: string, extra: JsonBody = {}) {
  const res = await api("/v1/projects/-/hooks", {
    method: "POST",
    body: { kind, name: `${kind} hook`, topic: "ops", ...extra },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json as { hook: JsonBody & { id: string; url: string }; secret: string };
}

async function send(url: string, payload: string, headers: Record<string, string>) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: payload,
  });
  const replayed = res.headers.get("idempotent-replayed") === "true";
  return { status: res.status, replayed, json: (await body(res)) as JsonBody };
}

async function stored(id: string) {
  const res = await api(`/v1/notifications/${id}`);
  expect(res.status).toBe(200);
  return res.json;
}

const countIn = async (projectId: string) =>
  Number(
    (
      await sql<{ n: string }>(
        server.databaseUrl,
        "select count(*) as n from notification where project_id = $1",
        [projectId],
      )
    )[0]?.n,
  );

describe("managing hooks", () => {
  it("creates with the secret once, lists without it, rotates and deletes", async () => {
    const { hook, secret } = await createHook("alertmanager");
    expect(secret).toMatch(/^hks_[a-z2-7]{26}$/);
    expect(hook).toMatchObject({ kind: "alertmanager", name: "alertmanager hook", topic: "ops" });
    expect(hook.url).toBe(`${server.url}/v1/hooks/${hook.id}`);
    expect(hook.project_id).toBe(server.projectId);
    const listed = await api(`/v1/projects/${server.projectId}/hooks`);
    expect(listed.json.hooks.map((h: JsonBody) => h.id)).toContain(hook.id);
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    const rows = await sql(server.databaseUrl, "select * from hook where id = $1", [hook.id]);
    expect(JSON.stringify(rows)).not.toContain(secret.slice(4));

    const alert = (groupKey: string) =>
      JSON.stringify({ status: "resolved", alerts: [], groupKey });
    const rotated = await api(`/v1/projects/-/hooks/${hook.id}/rotate-secret`, {
      method: "POST",
      body: {},
    });
    expect(rotated.status).toBe(200);
    expect(rotated.json.secret).not.toBe(secret);
    expect(Date.parse(rotated.json.hook.previous_secret_until) - Date.now()).toBeGreaterThan(
      23.9 * 3600_000,
    );
    // Both work during the overlap.
    for (const s of [secret, rotated.json.secret]) {
      expect((await send(hook.url, alert(s), { authorization: `Bearer ${s}` })).status).toBe(202);
    }
    expect((await api(`/v1/projects/-/hooks/${hook.id}`, { method: "DELETE" })).status).toBe(200);
    const gone = await send(hook.url, alert("gone"), {
      authorization: `Bearer ${rotated.json.secret}`,
    });
    expect(gone.status).toBe(401);
  });

  it("refuses a template on a kind that takes none, and a template that cannot render", async () => {
    const github = await api("/v1/projects/-/hooks", {
      method: "POST",
      body: { kind: "github", name: "gh", template: { title: "{{x}}" } },
    });
    expect(github.status).toBe(400);
    expect(github.json.errors[0].field).toBe("template");
    for (const [title, said] of [
      ["{{#a}}open", /Mustache/],
      ["{{> partial}}", /partials/],
    ] as const) {
      const res = await api("/v1/projects/-/hooks", {
        method: "POST",
        body: { kind: "generic", name: "g", template: { title } },
      });
      expect(res.status).toBe(400);
      expect(res.json.errors[0].field).toBe("template.title");
      expect(res.json.errors[0].message).toMatch(said);
    }
    const kind = await api("/v1/projects/-/hooks", {
      method: "POST",
      body: { kind: "jenkins", name: "j" },
    });
    expect(kind.status).toBe(400);
    expect(kind.json.errors[0].field).toBe("kind");
  });

  it("keeps one project's hooks from another project's key", async () => {
    const { hook } = await createHook("generic");
    const other = await addProjectWithKey(server, { newAccount: true });
    for (const path of [
      `/v1/projects/${server.projectId}/hooks`,
      `/v1/projects/${server.projectId}/hooks/${hook.id}`,
    ]) {
      const res = await api(path, {
        key: other.apiKey,
        method: path.endsWith(hook.id) ? "DELETE" : "GET",
      });
      expect(res.status).toBe(404);
    }
    const own = await api(`/v1/projects/-/hooks/${hook.id}`, {
      key: other.apiKey,
      method: "DELETE",
    });
    expect(own.status).toBe(404);
    expect((await api("/v1/projects/-/hooks", { key: other.apiKey })).json.hooks).toEqual([]);
    const reader = await addProjectWithKey(server, { scopes: ["read"] });
    const made = await api("/v1/projects/-/hooks", {
      key: reader.apiKey,
      method: "POST",
      body: { kind: "generic", name: "g" },
    });
    expect(made.status).toBe(403);
  });
});

describe("a sender's call", () => {
  it("GitHub: a failed workflow run is high, a passed one normal, signed; ping and unmapped are ignored", async () => {
    const { hook, secret } = await createHook("github");
    const passed = gitHubExample("workflow_run", (e) => e.workflow_run?.conclusion === "success");
    const failed = structuredClone(passed);
    failed.workflow_run.conclusion = "failure";
    const deliver = async (event: string, payload: JsonBody, delivery = crypto.randomUUID()) => {
      const text = JSON.stringify(payload);
      return send(hook.url, text, {
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-hub-signature-256": await sign(secret, text),
      });
    };
    const bad = await deliver("workflow_run", failed);
    expect(bad.status, JSON.stringify(bad.json)).toBe(202);
    const n = await stored(bad.json.id);
    expect(n.title).toMatch(/^✗ .*failed on master · octo-org\/octo-repo$/);
    expect(n).toMatchObject({
      priority: "high",
      topic: "ops",
      click_url: passed.workflow_run.html_url,
    });
    const good = await stored((await deliver("workflow_run", passed)).json.id);
    expect(good.title).toMatch(/^✓ /);
    expect(good.priority).toBe("normal");

    expect(
      (
        await deliver(
          "ping",
          gitHubExample("ping", () => true),
        )
      ).json,
    ).toEqual({
      ignored: true,
      reason: "ping",
    });
    const push = await deliver("push", { ref: "refs/heads/main" });
    expect(push.json).toEqual({ ignored: true, reason: "event push is not mapped" });
    const requested = gitHubExample("workflow_run", (e) => e.action === "requested");
    expect((await deliver("workflow_run", requested)).json.ignored).toBe(true);
  });

  it("GitHub: deployment status, published release and check suite", async () => {
    const { hook, secret } = await createHook("github");
    const cases: [string, JsonBody, RegExp][] = [
      [
        "deployment_status",
        gitHubExample("deployment_status", (e) => e.deployment_status.state === "success"),
        /^✓ Deployed Codertocat\/Hello-World to production$/,
      ],
      [
        "release",
        gitHubExample("release", (e) => e.action === "published"),
        /^Codertocat\/Hello-World 0\.0\.1 released$/,
      ],
      [
        "check_suite",
        gitHubExample(
          "check_suite",
          (e) => e.action === "completed" && e.check_suite.conclusion === "success",
        ),
        /^✓ .* passed on changes · Codertocat\/Hello-World$/,
      ],
    ];
    for (const [event, payload, title] of cases) {
      const text = JSON.stringify(payload);
      const res = await send(hook.url, text, {
        "x-github-event": event,
        "x-github-delivery": crypto.randomUUID(),
        "x-hub-signature-256": await sign(secret, text),
      });
      expect(res.status, `${event}: ${JSON.stringify(res.json)}`).toBe(202);
      expect((await stored(res.json.id)).title).toMatch(title);
    }
  });

  it("GitHub: a retry with the same X-GitHub-Delivery sends once; a form-encoded body is read", async () => {
    const { hook, secret } = await createHook("github");
    const project = await addProjectWithKey(server);
    const payload = JSON.stringify(gitHubExample("release", (e) => e.action === "published"));
    const headers = async (text: string) => ({
      "x-github-event": "release",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": await sign(secret, text),
    });
    const first = await send(hook.url, payload, await headers(payload));
    const again = await send(hook.url, payload, await headers(payload));
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again).toMatchObject({ replayed: true, json: { id: first.json.id } });
    const form = `payload=${encodeURIComponent(payload)}`;
    const res = await fetch(hook.url, {
      method: "POST",
      headers: {
        ...(await headers(form)),
        "x-github-delivery": crypto.randomUUID(),
        "content-type": "application/x-www-form-urlencoded",
      },
      body: form,
    });
    expect(res.status).toBe(202);
    expect(await countIn(project.projectId)).toBe(0);
  });

  it("one 401 for an unknown hook, a wrong signature, a missing one, and the other kinds' credentials", async () => {
    const { hook, secret } = await createHook("github");
    const text = JSON.stringify(gitHubExample("ping", () => true));
    const answers = [
      await send(hook.url, text, {
        "x-github-event": "ping",
        "x-hub-signature-256": await sign("wrong", text),
      }),
      await send(hook.url, text, { "x-github-event": "ping" }),
      await send(hook.url, text, { "x-github-event": "ping", authorization: `Bearer ${secret}` }),
      await send(`${server.url}/v1/hooks/${crypto.randomUUID()}`, text, {
        "x-github-event": "ping",
        "x-hub-signature-256": await sign(secret, text),
      }),
      await send(`${server.url}/v1/hooks/not-a-uuid`, text, {}),
    ];
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.json.detail).toBe("unknown hook, or a missing or wrong credential");
    }
    // A tampered body no longer matches its signature.
    const sig = await sign(secret, text);
    const tampered = await send(hook.url, text.replace("}", ', "x": 1}'), {
      "x-github-event": "ping",
      "x-hub-signature-256": sig,
    });
    expect(tampered.status).toBe(401);
  });

  it("GitLab: pipeline and deployment examples, X-Gitlab-Token, the event UUID's retry once", async () => {
    const { hook, secret } = await createHook("gitlab");
    const headers = (event: string, uuid = crypto.randomUUID()) => ({
      "x-gitlab-event": event,
      "x-gitlab-token": secret,
      "x-gitlab-event-uuid": uuid,
    });
    const pipeline = await send(
      hook.url,
      fixture("gitlab-pipeline.json"),
      headers("Pipeline Hook"),
    );
    expect(pipeline.status, JSON.stringify(pipeline.json)).toBe(202);
    expect(await stored(pipeline.json.id)).toMatchObject({
      title: "✓ Pipeline #31 passed on master · gitlab-org/gitlab-test",
      priority: "normal",
      click_url: "http://example.com/gitlab-org/gitlab-test/-/pipelines/31",
    });
    const failing = JSON.parse(fixture("gitlab-pipeline.json"));
    failing.object_attributes.status = "failed";
    const failed = await send(hook.url, JSON.stringify(failing), headers("Pipeline Hook"));
    const f = await stored(failed.json.id);
    expect(f).toMatchObject({
      title: "✗ Pipeline #31 failed on master · gitlab-org/gitlab-test",
      priority: "high",
    });
    expect(f.message).toContain("failed: test: test-build");
    const uuid = crypto.randomUUID();
    const deploy = await send(
      hook.url,
      fixture("gitlab-deployment.json"),
      headers("Deployment Hook", uuid),
    );
    expect(await stored(deploy.json.id)).toMatchObject({
      title: "✓ Deployed root/test-deployment-webhooks to staging",
      click_url: "https://staging.example.com",
    });
    const retry = await send(
      hook.url,
      fixture("gitlab-deployment.json"),
      headers("Deployment Hook", uuid),
    );
    expect(retry).toMatchObject({ replayed: true, json: { id: deploy.json.id } });
    const wrong = await send(hook.url, fixture("gitlab-deployment.json"), {
      ...headers("Deployment Hook"),
      "x-gitlab-token": "hks_wrong",
    });
    expect(wrong.status).toBe(401);
    const push = await send(hook.url, "{}", headers("Push Hook"));
    expect(push.json).toEqual({ ignored: true, reason: "event Push Hook is not mapped" });
  });

  it("Grafana: the documented example is one notification; its resend is the same one", async () => {
    const { hook, secret } = await createHook("grafana");
    const auth = { authorization: `Bearer ${secret}` };
    const first = await send(hook.url, fixture("grafana.json"), auth);
    expect(first.status, JSON.stringify(first.json)).toBe(202);
    const n = await stored(first.json.id);
    expect(n).toMatchObject({
      title: "[FIRING:2] High memory usage, High CPU usage",
      priority: "high",
      click_url: "https://play.grafana.org/alerting/1afz29v7z/edit",
    });
    expect(n.message).toBe(
      "• This alert was triggered for zone us-1\n• This alert was triggered for zone eu-1",
    );
    const again = await send(hook.url, fixture("grafana.json"), auth);
    expect(again.json.id).toBe(first.json.id);
  });

  it("generic: a template renders the body; bad output names the field; no template takes the body's own", async () => {
    const { hook, secret } = await createHook("generic", {
      template: {
        // Nothing but the body's data: {{constructor}} finds nothing.
        title: "{{service}} {{status}}{{constructor}}{{__proto__}}",
        message: "{{#checks}}{{name}}: {{result}}\n{{/checks}}",
        priority: "{{level}}",
        click_url: "{{links.run}}",
      },
    });
    const auth = { authorization: `Bearer ${secret}` };
    const payload = {
      service: "api",
      status: "down <500>",
      level: "high",
      checks: [
        { name: "db", result: "ok" },
        { name: "http", result: "fail" },
      ],
      links: { run: "https://ci.example.com/run/1?a=1&b=2" },
    };
    const res = await send(hook.url, JSON.stringify(payload), auth);
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    expect(await stored(res.json.id)).toMatchObject({
      title: "api down <500>",
      message: "db: ok\nhttp: fail",
      priority: "high",
      topic: "ops",
      click_url: "https://ci.example.com/run/1?a=1&b=2",
    });
    const bad = await send(hook.url, JSON.stringify({ ...payload, level: "urgent!" }), auth);
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0]).toMatchObject({ field: "priority" });
    const empty = await send(hook.url, JSON.stringify({ level: "low" }), auth);
    expect(empty.json.errors[0]).toMatchObject({ field: "title" });
    const notJson = await send(hook.url, "not json", auth);
    expect(notJson.status).toBe(400);
    expect(notJson.json.errors[0].field).toBe("body");

    const plain = await createHook("generic");
    const own = await send(
      plain.hook.url,
      JSON.stringify({ title: "Backup done", message: "42 GB", priority: "2", topic: "backups" }),
      { authorization: `Bearer ${plain.secret}`, "idempotency-key": "backup-2026-11-25" },
    );
    expect(await stored(own.json.id)).toMatchObject({
      title: "Backup done",
      message: "42 GB",
      priority: "low",
      topic: "backups",
    });
  });

  it("a bad payload after a good credential is 400; before one, 401 (nothing is read unauthenticated)", async () => {
    const { hook, secret } = await createHook("alertmanager");
    const shapeless = await send(hook.url, JSON.stringify({ status: "firing" }), {
      authorization: `Bearer ${secret}`,
    });
    expect(shapeless.status).toBe(400);
    expect(shapeless.json.errors[0]).toMatchObject({
      field: "alerts",
      message: "must be an array",
    });
    const anonymous = await send(hook.url, "not json", {});
    expect(anonymous.status).toBe(401);
  });

  it("meets the limits of any publish: the monthly quota, and the hook's and account's rate", async () => {
    const small = await startServer({ monthlyQuota: 1, rateLimitBurst: 3, rateLimitPerSecond: 1 });
    try {
      const made = await fetch(`${small.url}/v1/projects/-/hooks`, {
        method: "POST",
        headers: { authorization: `Bearer ${small.apiKey}` },
        body: JSON.stringify({ kind: "generic", name: "limits" }),
      });
      const { hook, secret } = (await made.json()) as { hook: { url: string }; secret: string };
      const auth = { authorization: `Bearer ${secret}` };
      const first = await send(hook.url, JSON.stringify({ title: "one" }), auth);
      expect(first.status).toBe(202);
      const over = await send(hook.url, JSON.stringify({ title: "two" }), auth);
      expect(over.json.code).toBe("quota_exceeded");
      const third = await send(hook.url, JSON.stringify({ title: "three" }), auth);
      expect(third.json.code).toBe("quota_exceeded");
      // The hook's own bucket (3, refilled 1/s) is spent: the next one is rate limited.
      const limited = await send(hook.url, JSON.stringify({ title: "four" }), auth);
      expect(limited.status).toBe(429);
      expect(limited.json.code).toBe("rate_limited");
    } finally {
      await small.close();
    }
  });
});
