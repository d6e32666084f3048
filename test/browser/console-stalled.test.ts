/**
 * The console's live streams over a connection a network dropped without a word: nothing
 * forwarded and nothing closed (a TCP proxy that stalls), as after a laptop's sleep or a changed
 * network. The feed must not go on calling itself live, and a browser receiving over the live
 * stream must not stop receiving: each stream not heard from for about twice the interval its
 * server says is taken for dead and opened again (web/src/live.ts).
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumArgs, findChromium, signInToConsole } from "../helpers/chromium.ts";
import { deviceDeliveries } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { startTcpProxy, type TcpProxy } from "../helpers/tcp-proxy.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let proxy: TcpProxy;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  // Keepalives and the feed's pages every 0.5 s: a stream silent for 6 s is taken for dead.
  server = await startServer({ streamKeepaliveMs: 500 });
  proxy = await startTcpProxy({ host: "127.0.0.1", port: server.port });
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  const context = await browser.newContext();
  // As in a browser that has no Web Push: "Notify me in this browser" receives over a stream.
  await context.addInitScript(() => {
    Reflect.deleteProperty(globalThis, "PushManager");
  });
  page = await context.newPage();
  await signInToConsole(page, `http://127.0.0.1:${proxy.port}`, "owner@example.com", ownerPassword);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await server?.close();
});

async function publish(title: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify({ title }),
  });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

const feed = () => page.getByRole("list", { name: "Notifications" });

describe("a live stream whose connection went silent", () => {
  it("the feed says so, watches again, and shows what was published meanwhile", async () => {
    await publish("Before the stall");
    await feed().getByText("Before the stall").waitFor({ timeout: 10_000 });
    await page.getByText(/^Live: updated/).waitFor();
    proxy.stall();
    await page
      .getByText("the server said nothing for 6 s; reconnecting…")
      .waitFor({ timeout: 15_000 });
    await publish("During the stall");
    // Watched again on a new connection (or after one more dead one that was kept idle).
    await feed().getByText("During the stall").waitFor({ timeout: 30_000 });
    await page.getByText(/^Live: updated/).waitFor();
    expect(await feed().getByText("Before the stall").count()).toBe(1);
  }, 60_000);

  it("a browser receiving over the live stream keeps receiving", async () => {
    await page.getByRole("button", { name: "Notify me in this browser" }).click();
    await page.getByText("This page receives notifications while open").waitFor();
    await publish("Heard before");
    await page.locator(".toast").getByText("Heard before").waitFor({ timeout: 10_000 });
    proxy.stall();
    const id = await publish("Sent into the silence");
    // Not on the stalled stream: taken for dead after 6 s, subscribed again from the cursor.
    await page.locator(".toast").getByText("Sent into the silence").waitFor({ timeout: 30_000 });
    const states = () => deviceDeliveries(server.url, server.apiKey, id);
    await waitFor(async () => (await states())[0]?.state === "delivered", 10_000);
    expect(await states()).toEqual([
      expect.objectContaining({ platform: "stream", state: "delivered" }),
    ]);
  }, 60_000);

  it("a receipt that never comes back does not hold the browser's stream", async () => {
    // As a receipt sent on a connection a network dropped: no answer, no close.
    let held = 0;
    await page.route("**/herald.v1.InboxService/ConfirmReceipts", (route) => {
      if (held++ === 0) return; // never answered
      return route.continue();
    });
    await publish("Its receipt hangs");
    await page
      .locator(".toast")
      .getByText("Its receipt hangs")
      .first()
      .waitFor({ timeout: 10_000 });
    const id = await publish("After the hung receipt");
    await page.locator(".toast").getByText("After the hung receipt").waitFor({ timeout: 20_000 });
    await waitFor(
      async () => (await deviceDeliveries(server.url, server.apiKey, id))[0]?.state === "delivered",
      10_000,
    );
    expect(held).toBeGreaterThanOrEqual(2);
    await page.unroute("**/herald.v1.InboxService/ConfirmReceipts");
  }, 60_000);
});
