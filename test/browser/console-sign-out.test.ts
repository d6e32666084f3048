/**
 * Signing out of the console ends this browser as the account's device, and a browser that
 * still keeps another account's device (its session ended without "Sign out") forgets it when
 * someone signs in: before, the second account's console went on receiving, and showing, the
 * first account's notifications. Here in a browser without Web Push (a stream device), the
 * case where the page itself shows what arrives.
 */
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newAccount } from "../helpers/accounts.ts";
import { chromiumArgs, findChromium, signInToConsole } from "../helpers/chromium.ts";
import { sql } from "../helpers/db.ts";
import { notificationOf } from "../helpers/http.ts";
import { notify, ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const shots = join(import.meta.dirname, "../../docs/screenshots");
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 1000 });
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** A page of a new browser profile without Web Push, the owner signed in. */
async function ownersPage(): Promise<Page> {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    Reflect.deleteProperty(globalThis, "PushManager");
  });
  const page = await context.newPage();
  await signInToConsole(page, server.url, "owner@example.com", ownerPassword);
  return page;
}

/** Turns the page's browser on as a device; returns the device's id. */
async function receiveHere(page: Page): Promise<string> {
  const before = await streamDevices();
  await page.getByRole("button", { name: "Notify me in this browser" }).click();
  await page.getByText("This page receives notifications while open").waitFor();
  const added = (await streamDevices()).filter((d) => !before.includes(d));
  expect(added).toHaveLength(1);
  return added[0] as string;
}

async function streamDevices(): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    server.databaseUrl,
    "select id from device where platform = 'stream' and signed_out_at is null",
  );
  return rows.map((r) => r.id);
}

/** Publishes as the owner; once fanned out, the devices it was delivered to. */
async function reachedBy(title: string): Promise<string[]> {
  const n = await notify(server, { title });
  expect(n.status).toBe(202);
  const get = () => notificationOf(server.url, server.apiKey, n.json.id as string);
  await waitFor(async () => (await get()).status !== "queued");
  return (await get()).device_deliveries.map((d: { device_id: string }) => d.device_id);
}

async function signedOut(id: string): Promise<boolean> {
  const [row] = await sql<{ out: boolean }>(
    server.databaseUrl,
    "select signed_out_at is not null as out from device where id = $1",
    [id],
  );
  return row?.out ?? false;
}

describe("signing out of the console", () => {
  it("ends this browser as a device, without telling it was done elsewhere", async () => {
    const page = await ownersPage();
    const device = await receiveHere(page);
    // The toast that said so gone (6 s), as a person signing out later would find the page.
    await expect.poll(() => page.locator(".toast").count(), { timeout: 15_000 }).toBe(0);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page
      .getByText("Signed out. This browser no longer receives the account's notifications.")
      .waitFor();
    expect(await signedOut(device)).toBe(true);
    // What is published now has no delivery to it.
    expect(await reachedBy("after sign out")).not.toContain(device);
    expect(await page.getByText(/signed out as a device elsewhere/).count()).toBe(0);
    await page.screenshot({ path: join(shots, "console-signed-out.png") });
    await page.context().close();
  });
});

describe("signing in as another account", () => {
  it("ends the first account's device this browser still kept", async () => {
    const page = await ownersPage();
    const device = await receiveHere(page);
    // The session ends without "Sign out" (it expired, or a password change ended it).
    await page.context().clearCookies();
    const other = await newAccount(server, "second@example.com");
    await signInToConsole(page, server.url, other.email, other.password);
    await page.getByRole("button", { name: "Notify me in this browser" }).waitFor();
    expect(await page.getByText("This page receives notifications while open").count()).toBe(0);
    expect(await signedOut(device)).toBe(true);
    expect(await reachedBy("the owner's, later")).not.toContain(device);
    await page.context().close();
  });
});
