/**
 * The console's Hooks page (issue 25), in a real Chromium: a hook made for Alertmanager shows
 * its URL, its secret once and the configuration to paste, each with a copy button; a generic
 * hook's template fields appear when it is chosen, and what the page showed works: a POST with
 * the shown URL and secret becomes the templated notification; rotate and delete.
 */
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumArgs, findChromium, signInToConsole } from "../helpers/chromium.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";

const shots = join(import.meta.dirname, "../../docs/screenshots");
let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startServer();
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on("dialog", (d) => void d.accept());
  await signInToConsole(page, server.url, "owner@example.com", ownerPassword);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("the Hooks page", () => {
  it("makes an Alertmanager hook: URL, secret once and the configuration to paste", async () => {
    await page.getByRole("link", { name: "Hooks", exact: true }).click();
    await page.getByText("No hooks yet.").waitFor();
    await page.getByLabel("Sender", { exact: true }).selectOption("alertmanager");
    expect(await page.getByLabel("Title template").isVisible()).toBe(false);
    await page.getByLabel("Name").fill("prod alerts");
    await page.getByLabel("Topic").fill("oncall");
    await page.getByRole("button", { name: "Create hook" }).click();
    const secret = (await page.getByLabel("Hook secret").textContent()) as string;
    expect(secret).toMatch(/^hks_[a-z2-7]{26}$/);
    const url = (await page.getByLabel("Hook URL").textContent()) as string;
    expect(url).toMatch(new RegExp(`^${server.url}/v1/hooks/[0-9a-f-]{36}$`));
    const config = await page.getByLabel("Sender configuration").textContent();
    expect(config).toContain(`- url: ${url}`);
    expect(config).toContain(`credentials: ${secret}`);
    for (const name of ["Copy URL", "Copy secret", "Copy configuration"]) {
      await page.getByRole("button", { name, exact: true }).first().waitFor();
    }
    await page.getByRole("row", { name: /prod alerts/ }).waitFor();
    await page.screenshot({ path: join(shots, "hooks.png") });
    const listed = await fetch(`${server.url}/v1/projects/-/hooks`, {
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(await listed.text()).not.toContain(secret);
  });

  it("makes a generic hook with a template; what the page showed publishes", async () => {
    await page.getByLabel("Sender", { exact: true }).selectOption("generic");
    await page.getByLabel("Title template").fill("{{service}} is {{status}}");
    await page.getByLabel("Priority template").fill("{{severity}}");
    await page.getByLabel("Name").fill("uptime");
    await page.getByRole("button", { name: "Create hook" }).click();
    await page.getByText('Any JSON (template) hook "uptime"').waitFor();
    const secret = (await page.getByLabel("Hook secret").textContent()) as string;
    const url = (await page.getByLabel("Hook URL").textContent()) as string;
    const res = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ service: "api", status: "down", severity: "high" }),
    });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ title: "api is down", priority: "high" });

    await page.getByRole("button", { name: "Rotate the secret of uptime" }).click();
    await page.getByText('Any JSON (template) hook "uptime"').waitFor();
    await expect.poll(() => page.getByLabel("Hook secret").textContent()).not.toBe(secret);
    await page.getByRole("button", { name: "Delete uptime" }).click();
    await page.getByRole("row", { name: /uptime/ }).waitFor({ state: "detached" });
  });
});
