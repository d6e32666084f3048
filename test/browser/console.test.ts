/**
 * The console as a person uses it, in a real Chromium: the first-run setup link, a project and
 * a key (its secret shown once), a publish with that key appearing live with its delivery
 * state, this browser becoming a device that receives through its service worker, and a
 * revoked key refused. Controls are found by role and accessible name, as a screen reader
 * would. Screenshots of the main pages go to docs/screenshots/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { SetupLinkRepository } from "../../src/db/repositories/setup-links.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { chromiumArgs, findChromium } from "../helpers/chromium.ts";
import { sql } from "../helpers/db.ts";
import { refusedAt } from "../helpers/http.ts";
import { defaultTestSenders, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const shots = join(import.meta.dirname, "../../docs/screenshots");
const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:owner@example.com" };

let server: TestServer;
let fake: FakeWebPush;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  fake = await startFakeWebPush();
  const senders = defaultTestSenders().filter((s) => s.platform !== "web");
  server = await startServer({ signupEnabled: true, webhookAllowPrivate: true }, [
    ...senders,
    createWebPushSender({ vapid, ca: fake.ca, allowPrivate: true }),
  ]);
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(["notifications"], { origin: server.url });
  // Chromium's own push service (Google's) is out of reach: the page's subscription points at
  // the fake push service instead, with keys the fake can decrypt with.
  const sub = fake.subscribe();
  await context.addInitScript((s: { endpoint: string; p256dh: string; auth: string }) => {
    const fakeSub = {
      endpoint: s.endpoint,
      toJSON: () => ({ endpoint: s.endpoint, keys: { p256dh: s.p256dh, auth: s.auth } }),
      unsubscribe: async () => true,
    };
    const push = (globalThis as unknown as { PushManager: { prototype: Record<string, unknown> } })
      .PushManager.prototype;
    push.subscribe = async () => fakeSub;
    push.getSubscription = async () => fakeSub;
  }, sub);
  page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});

const publish = (key: string, title: string) =>
  fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ title, message: "from the console test", metadata: { build: 42 } }),
  });

/** The page's active service worker, asked afresh (an update may have replaced it). */
const serviceWorker = () => context.serviceWorkers().find((w) => w.url().endsWith("/sw.js"));

// The worker's scope, as far as these helpers use it (the test's types have no webworker lib).
type Shown = { actions: { title: string; action: string }[] };
type Scope = {
  registration: { getNotifications(o: { tag: string }): Promise<Shown[]> };
  dispatchEvent(e: unknown): boolean;
  NotificationEvent: new (type: string, init: { notification: Shown; action: string }) => unknown;
};

/** The buttons of each notification the worker shows for `tag`, as `action=title`. */
const shownButtons = (tag: string) =>
  serviceWorker()?.evaluate(async (t) => {
    const scope = globalThis as unknown as Scope;
    const list = await scope.registration.getNotifications({ tag: t });
    return list.map((n) => n.actions.map((a) => `${a.action}=${a.title}`));
  }, tag);

/** Presses a button of the notification shown for `tag`, as the person would. */
const pressButton = (tag: string, action: string) =>
  serviceWorker()?.evaluate(
    async ([t, a]) => {
      const scope = globalThis as unknown as Scope;
      const [n] = await scope.registration.getNotifications({ tag: t as string });
      try {
        scope.dispatchEvent(
          new scope.NotificationEvent("notificationclick", {
            notification: n as Shown,
            action: a as string,
          }),
        );
      } catch {
        // a synthetic event's waitUntil may refuse; the call it started still runs
      }
    },
    [tag, action],
  );

/**
 * Hands pushes to the page's service worker as the browser's push service would (Chromium's
 * DevTools protocol), once its registration is known.
 */
async function pushChannel(): Promise<(payload: unknown) => Promise<unknown>> {
  const cdp = await context.newCDPSession(page);
  let registrationId = "";
  cdp.on(
    "ServiceWorker.workerRegistrationUpdated",
    (e: { registrations: { registrationId: string; scopeURL: string }[] }) => {
      const r = e.registrations.find((x) => x.scopeURL === `${server.url}/`);
      if (r) registrationId = r.registrationId;
    },
  );
  await cdp.send("ServiceWorker.enable");
  await waitFor(() => registrationId !== "");
  return async (payload) => {
    // A push handed over CDP while Chromium restarts an idle worker can be dropped (a harness
    // artifact: a real push service's message wakes the worker itself). Wake it first.
    await waitFor(
      async () =>
        (await serviceWorker()
          ?.evaluate(() => true)
          .catch(() => false)) === true,
    );
    return cdp.send("ServiceWorker.deliverPushMessage", {
      origin: server.url,
      registrationId,
      data: JSON.stringify(payload),
    });
  };
}

describe("the console", () => {
  let secret = "";

  it("sets the owner's password from the first-run link and signs in", async () => {
    const token = await new SetupLinkRepository(server.orm).create(server.accountId);
    await page.goto(`${server.url}/setup#${token}`);
    // Which account, said to the person and given to password managers as the username.
    await page.getByText("Setting the password of owner@example.com.").waitFor();
    const username = page.locator('input[autocomplete="username"]');
    expect(await username.inputValue()).toBe("owner@example.com");
    // Not drawn: a 1-pixel box with its content clipped.
    const holder = page.locator("label.visually-hidden", { has: username });
    expect((await holder.boundingBox())?.width ?? 0).toBeLessThanOrEqual(1);
    await page.getByLabel("New password").fill("correct horse battery staple");
    await page.getByLabel("Repeat the password").fill("correct horse battery staple");
    await page.screenshot({ path: join(shots, "setup.png") });
    await page.getByRole("button", { name: "Set password and sign in" }).click();
    await page.getByRole("heading", { name: "Notifications" }).waitFor();
    // The session is an HttpOnly cookie: no page script can read it.
    expect(await page.evaluate("document.cookie")).toBe("");
    const cookie = (await context.cookies()).find((c) => c.name === "herald_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
  });

  it("creates a project and a key whose secret is shown once", async () => {
    await page.getByRole("link", { name: "Projects" }).click();
    await page.getByLabel("Project name").fill("web-app");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("cell", { name: "web-app", exact: true }).waitFor();
    await page.getByLabel("Project", { exact: true }).selectOption({ label: "web-app" });
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByLabel("Key name").fill("ci");
    await page.getByLabel("read (history, status)").check();
    await page.getByRole("button", { name: "Create key" }).click();
    secret = (await page.getByLabel("New API key").textContent()) ?? "";
    expect(secret).toMatch(/^hk_[0-9A-Za-z]{38}$/);
    // A second key that expires in 90 days: its date is listed.
    await page.getByLabel("Key name").fill("deploy-bot");
    await page.getByLabel("Expires").selectOption({ label: "Expires in 90 days" });
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByLabel("New API key").waitFor();
    await page.reload();
    await page.getByRole("cell", { name: "ci", exact: true }).waitFor();
    expect(await page.content()).not.toContain(secret);
    const expires = page
      .getByRole("row", { name: /deploy-bot/ })
      .getByRole("cell")
      .nth(5);
    const in90 = new Date(Date.now() + 90 * 86_400_000);
    expect(await expires.textContent()).toContain(String(in90.getFullYear()));
    expect(
      await page.getByRole("row", { name: /^ci / }).getByRole("cell").nth(5).textContent(),
    ).toBe("never");
    await page.screenshot({ path: join(shots, "keys.png") });
  });

  it("shows a publish live, with its status and per-device delivery states", async () => {
    // Live by a stream (WatchNotifications), not by asking for the list again and again.
    const calls: string[] = [];
    const count = (r: { url(): string }) => calls.push(r.url().split("/").at(-1) ?? "");
    page.on("request", count);
    await page.getByRole("link", { name: "Notifications" }).click();
    await page.getByText("Nothing published yet").waitFor();
    // The first publish, as a command to copy.
    expect(await page.locator(".command code").innerText()).toMatch(
      /^curl -H "Authorization: Bearer \$HERALD_API_KEY" -d '\{"title":"Hello"\}' http:\/\/127\.0\.0\.1:\d+\/v1\/notify$/,
    );
    await page.getByRole("button", { name: "Copy" }).waitFor();
    // The Priority select lines up with the fields beside it.
    const select = await page.getByLabel("Priority").boundingBox();
    const title = await page.getByLabel("Title").boundingBox();
    expect(
      Math.abs((select?.y ?? 0) + (select?.height ?? 0) - (title?.y ?? 0) - (title?.height ?? 0)),
    ).toBeLessThan(2);
    expect((await publish(secret, "Deploy finished")).status).toBe(202);
    await page.getByText("Deploy finished").waitFor({ timeout: 10_000 });
    await page.getByRole("button", { name: "Details of Deploy finished" }).click();
    await page.getByText('"build": 42').waitFor();
    await page.getByText("No device received it.").waitFor();
    // A high one: its icon, its title a link to its click URL, its lines kept in the details.
    const paged = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}` },
      body: JSON.stringify({
        title: "db-1 down",
        message: "primary unreachable\nfailover started\nETA 2 min",
        priority: "high",
        click_url: "https://status.example.com/db-1",
      }),
    });
    expect(paged.status).toBe(202);
    await page.getByRole("img", { name: "high priority" }).first().waitFor({ timeout: 10_000 });
    expect(await page.getByRole("link", { name: "db-1 down" }).getAttribute("href")).toBe(
      "https://status.example.com/db-1",
    );
    page.off("request", count);
    expect(calls.filter((c) => c === "WatchNotifications").length).toBeGreaterThanOrEqual(1);
    expect(calls.filter((c) => c === "ListNotifications")).toEqual([]);
    await page.getByRole("button", { name: "Details of db-1 down" }).click();
    const message = page.locator(".feed .message", { hasText: "failover started" });
    const whiteSpace = await message.evaluate(
      (el) =>
        (
          globalThis as unknown as { getComputedStyle: (e: unknown) => { whiteSpace: string } }
        ).getComputedStyle(el).whiteSpace,
    );
    expect(whiteSpace).toBe("pre-wrap");
    expect((await message.innerText()).split("\n")).toEqual([
      "primary unreachable",
      "failover started",
      "ETA 2 min",
    ]);
    await page.screenshot({ path: join(shots, "notifications.png") });
  });

  it("makes this browser a device that receives through its service worker", async () => {
    await page.getByRole("button", { name: "Notify me in this browser" }).click();
    await page.getByText("This browser receives notifications", { exact: true }).waitFor();
    await page.getByRole("link", { name: "Devices" }).click();
    await page.getByRole("cell", { name: "Chrome on Linux", exact: true }).waitFor();
    await page.getByRole("cell", { name: "web", exact: true }).waitFor();
    await page.getByRole("button", { name: "Pair a phone or another computer" }).click();
    await page.getByLabel("Pairing code").waitFor();
    await page.getByRole("img", { name: /QR code of the pairing link/ }).waitFor();
    // The default install: a loopback address, which a phone cannot reach. Said, with the way out.
    await page
      .getByText(/Phones cannot use this link: 127\.0\.0\.1 is this computer's own address/)
      .waitFor();
    expect(await page.getByRole("link", { name: "docs/delivery.md" }).getAttribute("href")).toBe(
      "/docs/delivery.md",
    );
    await page.screenshot({ path: join(shots, "devices.png") });

    // The service worker's registration, to hand it the push as the browser's push service would.
    const deliver = await pushChannel();

    const res = await publish(secret, "Build failed on main");
    const { id } = (await res.json()) as { id: string };
    await waitFor(() => fake.received.some((r) => r.payload.id === id), 10_000);
    const pushed = fake.received.find((r) => r.payload.id === id);
    expect(pushed?.payload.title).toBe("Build failed on main");
    await page.getByRole("link", { name: "Notifications" }).click();
    await deliver(pushed?.payload);
    // The worker showed it and told the open console; it acknowledged it: `delivered`.
    await page.getByText("Received: Build failed on main").waitFor();
    const state = async () => {
      const r = await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      return r.status === 200
        ? ((await r.json()) as { device_deliveries: { state: string }[] }).device_deliveries[0]
            ?.state
        : r.status;
    };
    await waitFor(async () => (await state()) === "delivered");
    expect(await state()).toBe("delivered");
  });

  it("acknowledges from the notification's Acknowledge action, and closes one cleared elsewhere", async () => {
    expect(serviceWorker()).toBeDefined();
    const deliver = await pushChannel();
    const page1 = async (title: string) => {
      const res = await fetch(`${server.url}/v1/notify`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}` },
        body: JSON.stringify({ title, require_ack: true }),
      });
      const { id } = (await res.json()) as { id: string };
      await waitFor(() => fake.received.some((r) => r.payload.id === id), 10_000);
      const pushed = fake.received.find((r) => r.payload.id === id);
      expect(pushed?.payload.require_ack).toBe(true);
      await deliver(pushed?.payload);
      return id;
    };
    const shown = (id: string) => shownButtons(id);

    // The worker shows it with an Acknowledge button; pressing it acknowledges as this browser.
    const first = await page1("db-1 down");
    await waitFor(async () => ((await shown(first)) ?? []).length === 1, 8_000);
    if (((await shown(first)) ?? []).length === 0) {
      // Once in a full run, a push handed over CDP while the worker restarted was never shown:
      // the test's delivery (not Herald's) is retried, as a push service would.
      await deliver(fake.received.find((r) => r.payload.id === first)?.payload);
      await waitFor(async () => ((await shown(first)) ?? []).length === 1, 20_000);
    }
    expect(await shown(first)).toEqual([["ack=Acknowledge"]]);
    await pressButton(first, "ack");
    const acked = async () => {
      const r = await fetch(`${server.url}/v1/notifications/${first}`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      return ((await r.json()) as { acknowledged_at: string | null }).acknowledged_at;
    };
    await waitFor(async () => (await acked()) !== null, 10_000);

    // Acknowledged on another device: the clear push closes it here.
    const second = await page1("db-2 down");
    await waitFor(async () => ((await shown(second)) ?? []).length === 1, 20_000);
    await deliver({ type: "clear", id: second });
    await waitFor(async () => ((await shown(second)) ?? []).length === 0, 20_000);
    expect(await shown(second)).toEqual([]);
  }, 60_000);

  it("shows a pushed question's actions as buttons; pressing one answers it", async () => {
    const deliver = await pushChannel();
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}` },
      body: JSON.stringify({
        title: "Deploy v43?",
        actions: [
          { id: "yes", label: "Deploy" },
          { id: "no", label: "Cancel" },
        ],
      }),
    });
    const { id } = (await res.json()) as { id: string };
    await waitFor(() => fake.received.some((r) => r.payload.id === id), 10_000);
    await deliver(fake.received.find((r) => r.payload.id === id)?.payload);
    const shown = () => shownButtons(id);
    await waitFor(async () => ((await shown()) ?? []).length === 1, 20_000);
    expect(await shown()).toEqual([["answer:yes=Deploy", "answer:no=Cancel"]]);
    await pressButton(id, "answer:no");
    const answer = async () => {
      const r = await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${secret}` },
      });
      return ((await r.json()) as { response: { action_id: string } | null }).response;
    };
    await waitFor(async () => (await answer()) !== null, 10_000);
    expect(await answer()).toMatchObject({ action_id: "no" });
  }, 60_000);

  it("registers a webhook endpoint (secret shown once), lists it, and deletes it", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByText("No endpoints yet.").waitFor();
    // A URL box wide enough for a URL, and the reference one click away.
    const box = await page.getByLabel("Endpoint URL").boundingBox();
    expect(box?.width).toBeGreaterThan(400);
    expect(
      await page.getByRole("link", { name: "docs/api.md, Webhooks" }).getAttribute("href"),
    ).toBe("/docs/api.md");
    await page.getByLabel("Endpoint URL").fill("http://127.0.0.1:9/herald");
    await page.getByLabel("notification.escalated").check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const shown = await page.getByLabel("New signing secret").textContent();
    expect(shown).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const row = page.getByRole("row", { name: /http:\/\/127\.0\.0\.1:9\/herald/ });
    await row.getByText("enabled").waitFor();
    await expect(row.textContent()).resolves.toContain(
      "notification.delivered, notification.escalated, delivery.failed",
    );
    await page.screenshot({ path: join(shots, "webhooks.png") });
    // Listed without its secret, wherever one looks.
    const listed = await fetch(`${server.url}/v1/webhooks`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    expect(await listed.text()).not.toContain((shown as string).slice(6));
    await page.getByRole("button", { name: "Delete http://127.0.0.1:9/herald" }).click();
    await page.getByText("No endpoints yet.").waitFor();
  });

  it("shows a notification with a replace key in place of the earlier one, in the OS and the feed", async () => {
    const deliver = await pushChannel();
    await page.getByRole("link", { name: "Notifications" }).click();
    const send = async (title: string, priority: string) => {
      const res = await fetch(`${server.url}/v1/notify`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}` },
        body: JSON.stringify({ title, priority, replace_key: "deploy-web" }),
      });
      const { id } = (await res.json()) as { id: string };
      await waitFor(() => fake.received.some((r) => r.payload.id === id), 10_000);
      const pushed = fake.received.find((r) => r.payload.id === id);
      await deliver(pushed?.payload);
      await page.getByText(`Received: ${title}`).waitFor();
      return pushed?.payload.tag as string;
    };
    const tag = await send("deploy started", "normal");
    expect(tag).toMatch(/^r[A-Za-z0-9_-]{31}$/);
    await send("deploy finished", "high");
    const shown = await serviceWorker()?.evaluate(async (t) => {
      type Shown = { title: string; renotify?: boolean };
      const scope = globalThis as unknown as {
        registration: { getNotifications(o: { tag: string }): Promise<Shown[]> };
      };
      const list = await scope.registration.getNotifications({ tag: t });
      return list.map((n) => ({ title: n.title, renotify: n.renotify }));
    }, tag);
    // One shown, the later one; the priority rose, so the person is alerted again.
    expect(shown).toEqual([{ title: "deploy finished", renotify: true }]);
    // The feed: one entry, updated; the history (the API) keeps both.
    const feed = page.getByRole("list", { name: "Notifications" });
    const entry = feed.locator(":scope > li", { hasText: /deploy finished/ });
    await entry.getByText("updated ×1").waitFor();
    expect(await entry.count()).toBe(1);
    expect(await feed.locator(":scope > li", { hasText: /deploy started/ }).count()).toBe(0);
    await page.screenshot({ path: join(shots, "notifications-replaced.png") });
  });

  it("sets this browser's quiet hours from the Devices page, in its time zone", async () => {
    await page.getByRole("link", { name: "Devices" }).click();
    const row = page.getByRole("row", { name: /Chrome on Linux/ });
    await row.getByText("none", { exact: true }).waitFor();
    // Hours that do not include now, so the pushes of the tests after this one stay loud.
    const later = (new Date().getUTCHours() + 3) % 24;
    const span = `${String(later).padStart(2, "0")}:00-${String((later + 2) % 24).padStart(2, "0")}:00`;
    page.removeAllListeners("dialog");
    page.once("dialog", (d) => {
      expect(d.message()).toMatch(/Quiet hours of Chrome on Linux, as HH:MM-HH:MM in UTC/);
      void d.accept(span);
    });
    await row.getByRole("button", { name: "Quiet hours Chrome on Linux" }).click();
    await row.getByText(`${span.replace("-", "–")} UTC`).waitFor();
    page.on("dialog", (d) => void d.accept());
    await page.screenshot({ path: join(shots, "devices-quiet-hours.png") });
  });

  it("sets the topics a device receives from the Devices page, and says a bad one in words", async () => {
    await page.getByRole("link", { name: "Devices" }).click();
    const row = page.getByRole("row", { name: /Chrome on Linux/ });
    await row.getByText("every topic", { exact: true }).waitFor({ timeout: 8_000 });
    const topics = async (typed: string) => {
      page.removeAllListeners("dialog");
      page.once("dialog", (d) => {
        expect(d.message()).toMatch(/^Topics Chrome on Linux receives, separated by spaces/);
        void d.accept(typed);
      });
      await row.getByRole("button", { name: "Topics Chrome on Linux" }).click();
    };
    await topics("oncall, web-app/*");
    await row.getByText("oncall, web-app/*", { exact: true }).waitFor({ timeout: 8_000 });
    const [stored] = await sql<{ topics: string[] }>(
      server.databaseUrl,
      "select topics from device where name = 'Chrome on Linux' and signed_out_at is null",
    );
    expect(stored?.topics).toEqual(["oncall", "web-app/*"]);
    await page.screenshot({ path: join(shots, "devices-topics.png") });
    // Out of its characters: said in words, nothing changed.
    await topics("On Call");
    await page.getByText(/topics\[0\] must be a topic \("deploys"\)/).waitFor({ timeout: 8_000 });
    await row.getByText("oncall, web-app/*", { exact: true }).waitFor({ timeout: 8_000 });
    // Every topic again, for the tests after this one.
    await topics("");
    await row.getByText("every topic", { exact: true }).waitFor({ timeout: 8_000 });
    page.on("dialog", (d) => void d.accept());
  });

  it("approves a `herald login --device` from its verification page", async () => {
    const started = (await (
      await fetch(`${server.url}/v1/auth/device`, {
        method: "POST",
        headers: { "user-agent": "herald-cli (linux; node 24.0.0)" },
        body: JSON.stringify({ token_name: "build box" }),
      })
    ).json()) as { device_code: string; user_code: string; verification_uri_complete: string };
    await page.goto(started.verification_uri_complete);
    await page.getByRole("heading", { name: "Approve a sign-in" }).waitFor();
    expect(await page.getByLabel("Code shown by herald login").inputValue()).toBe(
      started.user_code,
    );
    // Who is asking, before anything is approved: the machine, its address and its client.
    await page.getByText("herald-cli (linux; node 24.0.0)").waitFor();
    const who = await page.locator(".who").innerText();
    expect(who).toMatch(/Machine\s+build box/);
    expect(who).toMatch(/From\s+127\.0\.0\.1/);
    expect(who).toMatch(/Its token\s+never expires/);
    await page.screenshot({ path: join(shots, "device-approve.png") });
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText('Approved: "build box" is signed in to your account.').waitFor();
    const poll = (await (
      await fetch(`${server.url}/v1/auth/device/token`, {
        method: "POST",
        body: JSON.stringify({ device_code: started.device_code }),
      })
    ).json()) as { status: string; token: string };
    expect(poll.status).toBe("approved");
    expect(poll.token).toMatch(/^hc_/);
  });

  it("loads every page of the console's router from its own URL (a reload, a bookmark)", async () => {
    const pagesDir = join(import.meta.dirname, "../../web/src/pages");
    const routes = readdirSync(pagesDir).flatMap((f) =>
      [...readFileSync(join(pagesDir, f), "utf8").matchAll(/route\("([^"]+)"/g)].map((m) => m[1]),
    );
    expect(routes).toContain("/webhooks");
    for (const path of routes) {
      const res = await page.goto(`${server.url}${path}`);
      expect(res?.status(), path).toBe(200);
      expect(res?.headers()["content-type"], path).toMatch(/text\/html/);
      await page.locator("h1, h2").first().waitFor();
      expect(await page.locator("body").innerText(), path).not.toMatch(/"statusCode"|Not Found/);
    }
    await page.goto(`${server.url}/notifications`);
  });

  it("revokes the key: the next publish is refused", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: "Revoke ci" }).click();
    await page.getByText("revoked").waitFor();
    // The revocation reaches every cache within a second.
    await waitFor(() => refusedAt(server.url, secret), 1_000);
    expect((await publish(secret, "after revoke")).status).toBe(401);
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByText("Usage this month").waitFor();
    // Self-hosted words: the limit and where it is set, not a plan.
    await page
      .getByText(
        /the server's monthly limit per account, set by the operator with HERALD_MONTHLY_QUOTA/,
      )
      .waitFor();
    // Tokens told apart by how they were made; the owner told why the account stays.
    await page.getByRole("cell", { name: "console session, setup link" }).first().waitFor();
    await page.getByText("This is the server's owner account: it cannot be deleted").waitFor();
    expect(await page.getByRole("button", { name: "Delete account permanently" }).count()).toBe(0);
    await page.screenshot({ path: join(shots, "account.png"), fullPage: true });
  });
});

describe("deleting an account from the console", () => {
  it("asks for the email typed out and the password, then signs out to a notice", async () => {
    const email = "leaving@example.com";
    const password = "a long test password";
    expect(
      (
        await fetch(`${server.url}/v1/accounts`, {
          method: "POST",
          body: JSON.stringify({ email, password }),
        })
      ).status,
    ).toBe(201);
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const p = await other.newPage();
    await p.goto(`${server.url}/signin`);
    await p.getByLabel("Email").fill(email);
    await p.getByLabel("Password").fill(password);
    await p.getByRole("button", { name: "Sign in" }).click();
    await p.getByRole("heading", { name: "Notifications" }).waitFor();
    await p.getByRole("link", { name: "Account" }).click();
    const button = p.getByRole("button", { name: "Delete account permanently" });
    await button.waitFor();
    expect(await button.isDisabled()).toBe(true);
    await p.getByLabel(`Type ${email} to confirm`).fill("leaving@example.co");
    expect(await button.isDisabled()).toBe(true);
    await p.getByLabel(`Type ${email} to confirm`).fill(email);
    await p.getByLabel("Password", { exact: true }).last().fill(password);
    expect(await button.isDisabled()).toBe(false);
    await button.scrollIntoViewIfNeeded();
    await p.screenshot({ path: join(shots, "account-delete.png"), fullPage: true });
    await button.click();
    await p.getByText("Your account and everything it held were deleted").waitFor();
    expect(new URL(p.url()).pathname).toBe("/signin");
    await p.screenshot({ path: join(shots, "account-deleted.png") });
    const gone = await fetch(`${server.url}/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ email, password }),
    });
    expect(gone.status).toBe(401);
    await other.close();
  });
});
