/**
 * "Notify me in this browser" where the browser has Web Push but will not give it to this page
 * says why in words a person can act on, where it said "this browser has no Web Push": a page
 * on plain http at a name other than localhost (the console reached on the LAN), and Safari on
 * an iPhone outside a Home Screen web app. Either way the page falls back to a live stream.
 */
import { type Browser, type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, it } from "vitest";
import { chromiumArgs, findChromium, signInToConsole } from "../helpers/chromium.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startServer();
  // herald.test is this machine: a name that is not localhost, so http is no secure context.
  browser = await chromium.launch({
    executablePath: findChromium(),
    args: [...chromiumArgs, "--host-resolver-rules=MAP herald.test 127.0.0.1"],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Signs in at `url` (in `context`, or a new one), asks for notifications, and waits for `said`. */
async function askFor(url: string, said: RegExp, context?: BrowserContext) {
  const page = await (context ?? (await browser.newContext())).newPage();
  await signInToConsole(page, url, "owner@example.com", ownerPassword);
  await page.getByRole("button", { name: "Notify me in this browser" }).click();
  await page.getByText(said).waitFor();
  await page.getByText("This page receives notifications while open").waitFor();
}

describe("Web Push refused to this page", () => {
  it("on plain http at a LAN name: says to open the console at its https address", async () => {
    const port = new URL(server.url).port;
    await askFor(
      `http://herald.test:${port}`,
      /Web Push is unavailable \(browsers give Web Push to https pages only; open the console at Herald's https address, HERALD_PUBLIC_URL\)/,
    );
  }, 60_000);

  it("in Safari on an iPhone outside the Home Screen: says how to add it there", async () => {
    const context = await browser.newContext({
      userAgent:
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    });
    // A Safari tab on iOS has no PushManager; a Home Screen web app has one.
    await context.addInitScript(() => Reflect.deleteProperty(globalThis, "PushManager"));
    await askFor(
      server.url,
      /Web Push is unavailable \(on an iPhone or iPad, Web Push needs Herald on the Home Screen: Share, then Add to Home Screen, and open it from there\)/,
      context,
    );
  }, 60_000);
});
