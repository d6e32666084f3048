/**
 * Web Push encryption for fan-outs (src/delivery/senders/web-push-encryptor.ts): messages that
 * start together are encrypted on a thread of their own, each body what its browser decrypts;
 * a lone message is encrypted in place; a refused subscription is refused alone; and a thread
 * that ends with a batch loses nothing (what it held is encrypted on the event loop).
 */
import { createECDH, randomBytes } from "node:crypto";
import ece from "http_ece";
import { afterEach, describe, expect, it } from "vitest";
import { WebPushEncryptor } from "../../../src/delivery/senders/web-push-encryptor.ts";

function browser() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  const keys = {
    p256dh: ecdh.getPublicKey().toString("base64url"),
    auth: auth.toString("base64url"),
  };
  const open = (body: Buffer) =>
    ece.decrypt(body, { version: "aes128gcm", privateKey: ecdh, authSecret: keys.auth }).toString();
  return { keys, open };
}

let encryptor: WebPushEncryptor;
afterEach(async () => encryptor.close());

describe("Web Push encryption for a fan-out", () => {
  it("encrypts messages started together on its thread, each for its own browser", async () => {
    encryptor = new WebPushEncryptor();
    const browsers = Array.from({ length: 150 }, browser);
    // Two notifications' texts among them, as a fan-out with per-device variants would have.
    const text = (i: number) => JSON.stringify({ id: i % 2 ? "odd" : "even", message: "é ✓" });
    const bodies = await Promise.all(browsers.map((b, i) => encryptor.encrypt(b.keys, text(i))));
    expect(bodies.map((body, i) => browsers[i]?.open(body))).toEqual(
      browsers.map((_, i) => text(i)),
    );
    expect(encryptor.counts).toEqual({ thread: 150, loop: 0 });
  });

  it("encrypts a lone message in place, with no thread hop", async () => {
    encryptor = new WebPushEncryptor();
    const b = browser();
    expect(b.open(await encryptor.encrypt(b.keys, "just one"))).toBe("just one");
    expect(encryptor.counts).toEqual({ thread: 0, loop: 1 });
  });

  it("refuses a subscription whose keys are not keys, and only that one", async () => {
    encryptor = new WebPushEncryptor();
    const browsers = Array.from({ length: 6 }, browser);
    const bad = { p256dh: "AAAA", auth: browsers[0]?.keys.auth as string };
    const results = await Promise.allSettled([
      ...browsers.map((b) => encryptor.encrypt(b.keys, "fine")),
      encryptor.encrypt(bad, "refused"),
    ]);
    expect(
      results.slice(0, 6).map((r, i) => r.status === "fulfilled" && browsers[i]?.open(r.value)),
    ).toEqual(Array(6).fill("fine"));
    const refused = results[6] as PromiseRejectedResult;
    expect(refused.status).toBe("rejected");
    expect(String(refused.reason)).toMatch(/not a P-256 public key/);
    expect(encryptor.counts.thread).toBe(7);
  });

  it("loses nothing when its thread ends with batches on it: they are encrypted here", async () => {
    encryptor = new WebPushEncryptor();
    // Two batches of 64 on the thread, and 72 waiting for room on it.
    const browsers = Array.from({ length: 200 }, browser);
    const pending = browsers.map((b, i) => encryptor.encrypt(b.keys, `message ${i}`));
    // The batches are posted on the next turn of the loop; the thread is still starting then.
    await new Promise((r) => setImmediate(r));
    await encryptor.close();
    const bodies = await Promise.all(pending);
    expect(bodies.map((body, i) => browsers[i]?.open(body))).toEqual(
      browsers.map((_, i) => `message ${i}`),
    );
    expect(encryptor.counts).toEqual({ thread: 0, loop: 200 });
  });
});
