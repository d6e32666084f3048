/**
 * "Notify me in this browser" when the browser's own push service cannot be reached. Headless
 * Chromium here refuses a subscription at once (no push service); a browser behind a proxy or
 * in an air-gapped lab instead waits forever, and that is what the second browser context does
 * (its `subscribe` never settles). Either way the page falls back to the live stream, says why,
 * and says it is asking while it waits, instead of staying grey.
 */
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import webpush from "web-push";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { chromiumArgs, findChromium } from "../helpers/chromium.ts";
import { defaultTestSenders, startServer, type TestServer } from "../helpers/server.ts";

const shots = join(import.meta.dirname, "../../docs/screenshots");
const vapid = { ...webpush.generateVAPIDKeys(), subject: "mailto:owner@example.com" };
let server: TestServer;
let browser: Browser;
let page: Page;
let hanging: Page;

beforeAll(async () => {
  const senders = defaultTestSenders().filter((s) => s.platform !== "web");
  server = await startServer({}, [...senders, createWebPushSender({ vapid })]);
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  const context = await browser.newContext();
  await context.grantPermissions(["notifications"], { origin: server.url });
  page = await signedIn(await context.newPage());
  const unreachable = await browser.newContext();
  await unreachable.grantPermissions(["notifications"], { origin: server.url });
  await unreachable.addInitScript(() => {
    const push = (globalThis as unknown as { PushManager: { prototype: Record<string, unknown> } })
      .PushManager.prototype;
    push.subscribe = () => new Promise(() => {});
  });
  hanging = await signedIn(await unreachable.newPage());
}, 60_000);

async function signedIn(p: Page): Promise<Page> {
  await p.goto(`${server.url}/signin`);
  await p.getByLabel("Email").fill("owner@example.com");
  await p.getByLabel("Password").fill("correct horse battery staple");
  await p.getByRole("button", { name: "Sign in" }).click();
  await p.getByRole("heading", { name: "Notifications" }).waitFor();
  return p;
}

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("a browser whose push service is out of reach", () => {
  it("that never answers: says it is asking, then falls back at the deadline, saying why", async () => {
    const started = Date.now();
    await hanging.getByRole("button", { name: "Notify me in this browser" }).click();
    await hanging.getByRole("button", { name: "Asking the browser's push service…" }).waitFor();
    await hanging
      .getByText(
        /Web Push is unavailable \(the browser's push service did not answer within 10 s\)/,
      )
      .waitFor({ timeout: 20_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    expect(Date.now() - started).toBeLessThan(15_000);
    await hanging.getByText("This page receives notifications while open").waitFor();
    await hanging.screenshot({ path: join(shots, "push-unreachable.png") });
  }, 60_000);

  it("that refuses: falls back at once, saying why, and still receives", async () => {
    await page.getByRole("button", { name: "Notify me in this browser" }).click();
    await page
      .getByText(/Web Push is unavailable \(the browser's push service refused: .+\)/)
      .waitFor();
    await page.getByText("This page receives notifications while open").waitFor();
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ title: "Still reaches you", message: "over the stream" }),
    });
    expect(res.status).toBe(202);
    await page.getByText("Still reaches you — over the stream").waitFor({ timeout: 10_000 });
  }, 60_000);
});
