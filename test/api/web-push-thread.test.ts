/**
 * `npm start`'s build encrypts a Web Push fan-out on its encryption thread (the thread's own
 * entry in dist/server, web-push-encryptor.ts): every browser gets a message it decrypts, the
 * server says the thread started and never that it failed, and it stops cleanly with the
 * thread running.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { freshDatabase } from "../helpers/db.ts";
import { body } from "../helpers/http.ts";
import { spawnHerald, waitForKey } from "../helpers/process.ts";
import { waitFor } from "../helpers/wait.ts";
import { subscribeBrowsers, webPushHeraldEnv } from "../helpers/web-push-herald.ts";

let fake: FakeWebPush;
beforeAll(async () => {
  fake = await startFakeWebPush();
});
afterAll(async () => fake.close());

describe("the build's Web Push encryption thread", () => {
  it("encrypts a fan-out to eight browsers, each decrypting its message", async () => {
    const owner = { email: "thread@example.com", password: "thread test password" };
    const herald = await spawnHerald({
      DATABASE_URL: await freshDatabase(),
      ...(await webPushHeraldEnv(owner.email, owner.password)),
      HERALD_LOG_LEVEL: "debug",
    });
    const apiKey = await waitForKey(herald);
    const subs = await subscribeBrowsers(herald.url, owner, fake, 8);
    const res = await fetch(`${herald.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ title: "to every browser" }),
    });
    const { id } = await body(res);
    // The fake decrypts each message as it arrives, with the subscription's private key.
    await waitFor(() => fake.received.filter((r) => r.payload.id === id).length === 8, 20_000);
    const got = fake.received.filter((r) => r.payload.id === id);
    expect(new Set(got.map((r) => r.subscription))).toEqual(new Set(subs.map((s) => s.id)));
    expect(got.every((r) => r.payload.title === "to every browser")).toBe(true);
    expect(herald.stdout()).toMatch(/Web Push's encryption thread started/);
    expect(herald.stdout() + herald.stderr()).not.toMatch(
      /encryption thread (did not start|failed)/,
    );
    herald.child.kill("SIGTERM");
    expect(await herald.exited).toBe(0);
  }, 60_000);
});
