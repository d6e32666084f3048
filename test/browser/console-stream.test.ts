/**
 * A browser without Web Push (or with notifications refused) still receives while the console
 * is open: "Notify me in this browser" falls back to a stream device and says why.
 */
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumArgs, findChromium, signInToConsole } from "../helpers/chromium.ts";
import { deviceDeliveries, rpcCalls } from "../helpers/http.ts";
import { ownerPassword, startServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const shots = join(import.meta.dirname, "../../docs/screenshots");
let server: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 1000 });
  browser = await chromium.launch({ executablePath: findChromium(), args: chromiumArgs });
  const context = await browser.newContext();
  // As in a browser that has no Web Push.
  await context.addInitScript(() => {
    Reflect.deleteProperty(globalThis, "PushManager");
  });
  page = await context.newPage();
  await signInToConsole(page, server.url, "owner@example.com", ownerPassword);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Publishes a question whose third action takes a typed reply; returns its id. */
async function ask(title: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify({
      title,
      message: "api v42, 3 services",
      actions: [
        { id: "yes", label: "Deploy" },
        { id: "no", label: "Cancel" },
        { id: "why", label: "Ask why", reply: true },
      ],
    }),
  });
  return ((await res.json()) as { id: string }).id;
}
const answerOf = async (id: string) =>
  (
    (await (
      await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      })
    ).json()) as { response: { action_id: string; text: string; device_id: string } | null }
  ).response;

describe("without Web Push", () => {
  it("receives over the live stream while the page is open, and says so", async () => {
    await page.getByRole("button", { name: "Notify me in this browser" }).click();
    await page.getByText(/Web Push is unavailable \(this browser has no Web Push\)/).waitFor();
    await page.getByText("This page receives notifications while open").waitFor();
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ title: "Disk almost full", message: "92% on db-1" }),
    });
    expect(res.status).toBe(202);
    await page.getByText("Disk almost full — 92% on db-1").waitFor({ timeout: 10_000 });
    const { id } = (await res.json()) as { id: string };
    // Handed to the page's stream in memory as the publish commits; the fan-out's delivery row
    // follows, and the page's receipt marks it delivered (it may be shown before the row exists).
    const deliveries = () => deviceDeliveries(server.url, server.apiKey, id);
    await waitFor(async () => (await deliveries())[0]?.state === "delivered", 10_000);
    expect(await deliveries()).toEqual([
      expect.objectContaining({ platform: "stream", state: "delivered" }),
    ]);
  });

  it("acknowledges, from the feed, a notification that asks for it, as this browser's device", async () => {
    const res = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ title: "db-1 down", require_ack: true, priority: "high" }),
    });
    const { id } = (await res.json()) as { id: string };
    const button = page.getByRole("button", { name: "Acknowledge db-1 down" });
    await button.waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(shots, "notifications-acknowledge.png") });
    await button.click();
    await page.getByText("acknowledged", { exact: true }).first().waitFor({ timeout: 10_000 });
    const n = (await (
      await fetch(`${server.url}/v1/notifications/${id}`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
      })
    ).json()) as {
      acknowledged_at: string | null;
      acknowledged_by_device_id: string;
      device_deliveries: { device_id: string }[];
    };
    expect(n.acknowledged_at).not.toBeNull();
    expect(n.acknowledged_by_device_id).toBe(n.device_deliveries[0]?.device_id);
    expect(await button.count()).toBe(0);
  });

  it("answers a question from the feed with its buttons, or a typed reply, as this browser's device", async () => {
    const first = await ask("Deploy api v42 to production?");
    const group = page.getByRole("group", { name: "Answer Deploy api v42 to production?" });
    await group.getByRole("button", { name: "Deploy" }).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(shots, "notifications-question.png") });
    await group.getByRole("button", { name: "Deploy" }).click();
    await page.getByText("answered", { exact: true }).first().waitFor({ timeout: 10_000 });
    expect(await answerOf(first)).toMatchObject({ action_id: "yes" });

    const second = await ask("Roll back db-2?");
    const reply = page.getByLabel("Ask why: your reply");
    await reply.waitFor({ timeout: 10_000 });
    await reply.fill("is the backup done?");
    // News while typing is held, and must not be drawn between pressing the reply's button and
    // its click (it took the click and the text).
    await ask("Restart db-3?");
    // Counted in the status line, and in a live region, so a screen reader says it too.
    await page.getByText("1 new notification, shown when you finish your reply.").first().waitFor();
    await page
      .getByRole("status")
      .filter({ hasText: "1 new notification, shown when you finish your reply." })
      .waitFor({ state: "attached" });
    expect(await reply.inputValue()).toBe("is the backup done?");
    await page
      .getByRole("group", { name: "Answer Roll back db-2?" })
      .getByRole("button", { name: "Ask why" })
      .click();
    await page.getByText("is the backup done?", { exact: true }).waitFor({ timeout: 10_000 });
    expect(await answerOf(second)).toMatchObject({ action_id: "why", text: "is the backup done?" });
    await page.screenshot({ path: join(shots, "notifications-answered.png") });
  });

  it("keeps a reply typed through news, and answers with Enter or a press that does not focus", async () => {
    const replyTo = (title: string) =>
      page.getByRole("group", { name: `Answer ${title}` }).getByRole("textbox");
    const held = page.locator(".held", {
      hasText: "1 new notification, shown when you finish your reply.",
    });

    // Enter sends the reply, and the feed shows it answered while focus is still in the field.
    await ask("Scale web to 6?");
    await replyTo("Scale web to 6?").fill("after 18:00");
    await replyTo("Scale web to 6?").press("Enter");
    await page.getByText("after 18:00", { exact: true }).waitFor({ timeout: 10_000 });

    // A reply typed and left (focus elsewhere) survives the feed being redrawn with news.
    await replyTo("Restart db-3?").fill("in 5 minutes");
    await page.getByRole("heading", { name: "Send a notification" }).click();
    await ask("Page the DBA?");
    await replyTo("Page the DBA?").waitFor({ timeout: 10_000 });
    expect(await replyTo("Restart db-3?").inputValue()).toBe("in 5 minutes");

    // As Safari presses a button: focus leaves the field and lands nowhere. News arriving while
    // the button is held down waits for the click, which answers with the typed text.
    const send = page.getByRole("group", { name: "Answer Restart db-3?" }).getByRole("button", {
      name: "Ask why",
    });
    await send.evaluate((button) =>
      button.addEventListener("mousedown", (e: { preventDefault(): void }) => {
        e.preventDefault();
        const { document } = globalThis as unknown as {
          document: { activeElement: { blur(): void } | null };
        };
        document.activeElement?.blur();
      }),
    );
    await replyTo("Restart db-3?").focus();
    await send.hover();
    await page.mouse.down();
    await ask("Rotate the logs?");
    await held.waitFor({ timeout: 10_000 });
    await page.mouse.up();
    await page.getByText("in 5 minutes", { exact: true }).waitFor({ timeout: 10_000 });
    await replyTo("Rotate the logs?").waitFor({ timeout: 10_000 });
    expect(await held.count()).toBe(0);
  });

  it("holds news in an errored status line's place without moving the feed", async () => {
    const replyTo = page.getByRole("group", { name: "Answer Page the DBA?" }).getByRole("textbox");
    const status = page.locator("p.muted", { hasText: "reconnecting…" });
    const feedTop = async () => (await page.locator("ul.feed").boundingBox())?.y;
    // Someone is typing a reply when the connection drops (the server closes it): the status
    // line says so, in a notice taller than its line.
    await replyTo.fill("paging now");
    (server.app.server as unknown as { closeAllConnections(): void }).closeAllConnections();
    await status.waitFor({ timeout: 15_000 });
    const top = await feedTop();
    // The feed reconnects; its first page, then news, are held while they type. The count takes
    // the error's place, and the feed under their pointer stays where it was.
    await ask("Failover to replica?");
    await page.locator(".held").waitFor({ timeout: 15_000 });
    expect(await feedTop()).toBe(top);
    await page.getByRole("heading", { name: "Send a notification" }).click();
    await page
      .locator(".feed .title", { hasText: "Failover to replica?" })
      .waitFor({ timeout: 10_000 });
    expect(await replyTo.inputValue()).toBe("paging now");
  });

  it("coming back to a backlog shows the first few, counts the rest in one toast, and confirms them in a few calls", async () => {
    await expect.poll(() => page.locator(".toast").count(), { timeout: 15_000 }).toBe(0);
    const calls = await rpcCalls(server.url, "InboxService");
    const consoleUrl = page.url();
    await page.goto("about:blank"); // the laptop's lid closed
    const ids: string[] = [];
    for (let i = 1; i <= 20; i++) {
      const res = await fetch(`${server.url}/v1/notify`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}` },
        body: JSON.stringify({ title: `Nightly job ${i} done` }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await page.goto(consoleUrl);
    await page.getByText("17 more arrived: see Notifications").waitFor({ timeout: 15_000 });
    for (const i of [1, 2, 3])
      await page.locator(".toast").getByText(`Nightly job ${i} done`, { exact: true }).waitFor();
    expect(await page.locator(".toast").count()).toBe(4);
    await page.screenshot({ path: join(shots, "console-backlog.png") });
    await waitFor(async () => {
      for (const id of ids) {
        const [d] = await deviceDeliveries(server.url, server.apiKey, id);
        if (d?.state !== "delivered") return false;
      }
      return true;
    }, 15_000);
    const after = await rpcCalls(server.url, "InboxService");
    expect(after.AckNotification ?? 0).toBe(calls.AckNotification ?? 0);
    expect((after.ConfirmReceipts ?? 0) - (calls.ConfirmReceipts ?? 0)).toBeLessThanOrEqual(4);
  });

  it("stops receiving, says so and offers to turn it on again when this browser's device is removed elsewhere", async () => {
    const login = await fetch(`${server.url}/v1/auth/login`, {
      method: "POST",
      body: JSON.stringify({ email: "owner@example.com", password: ownerPassword }),
    });
    const owner = `Bearer ${((await login.json()) as { token: string }).token}`;
    const list = await fetch(`${server.url}/v1/devices`, { headers: { authorization: owner } });
    const { devices } = (await list.json()) as { devices: { id: string; platform: string }[] };
    const mine = devices.filter((d) => d.platform === "stream");
    expect(mine).toHaveLength(1);
    // The earlier tests' toasts gone (6 s each) and the page at its top, as a person would find it.
    await expect.poll(() => page.locator(".toast").count(), { timeout: 15_000 }).toBe(0);
    await page.getByRole("heading", { name: "Notifications", level: 1 }).scrollIntoViewIfNeeded();
    const removed = await fetch(`${server.url}/v1/devices/${mine[0]?.id}`, {
      method: "DELETE",
      headers: { authorization: owner },
    });
    expect(removed.status).toBe(200);
    await page.getByText(/This browser was signed out as a device elsewhere/).waitFor();
    await page.getByRole("button", { name: "Notify me in this browser" }).waitFor();
    expect(await page.getByText("This page receives notifications while open").count()).toBe(0);
    await page.screenshot({ path: join(shots, "console-device-removed.png") });
  });
});
