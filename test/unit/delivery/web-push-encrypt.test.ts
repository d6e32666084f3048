/**
 * Web Push's payload encryption (src/delivery/senders/web-push-request.ts), RFC 8291's
 * aes128gcm: what a browser's key pair and auth secret decrypt (with `http_ece`, the library the
 * fake push service and web-push use), RFC 8188's header, a fresh key and salt per message, and
 * a subscription whose keys are not keys refused before anything is sent.
 */
import { createECDH, randomBytes } from "node:crypto";
import ece from "http_ece";
import { describe, expect, it } from "vitest";
import { encryptPayload } from "../../../src/delivery/senders/web-push-request.ts";

function browser() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    ecdh,
    auth,
    subscription: {
      endpoint: "https://push.example/sub",
      keys: { p256dh: ecdh.getPublicKey().toString("base64url"), auth: auth.toString("base64url") },
    },
  };
}

describe("Web Push payload encryption", () => {
  it("is what the browser's keys decrypt, in one record of RFC 8188's layout", () => {
    const b = browser();
    const text = JSON.stringify({ title: "Deploy finished", message: "é ✓ ".repeat(400) });
    const body = encryptPayload(b.subscription.keys, Buffer.from(text));
    const plain = ece.decrypt(body, {
      version: "aes128gcm",
      privateKey: b.ecdh,
      authSecret: b.auth.toString("base64url"),
    });
    expect(plain.toString()).toBe(text);
    // salt (16), record size 4096, key id length 65, the sender's P-256 public key.
    expect(body.readUInt32BE(16)).toBe(4096);
    expect(body[20]).toBe(65);
    expect(body[21]).toBe(4);
    // Header, then the ciphertext: plaintext, its delimiter and a 16-byte tag.
    expect(body.length).toBe(21 + 65 + Buffer.byteLength(text) + 1 + 16);
  });

  it("uses a new salt and key for every message, each decrypting (the browser's key kept)", () => {
    const b = browser();
    const [one, two] = [1, 2].map((n) =>
      encryptPayload(b.subscription.keys, Buffer.from(`same ${n}`)),
    );
    expect(one?.subarray(0, 16)).not.toEqual(two?.subarray(0, 16));
    expect(one?.subarray(21, 86)).not.toEqual(two?.subarray(21, 86));
    const open = (body: Buffer | undefined) =>
      ece
        .decrypt(body as Buffer, {
          version: "aes128gcm",
          privateKey: b.ecdh,
          authSecret: b.auth.toString("base64url"),
        })
        .toString();
    expect([open(one), open(two)]).toEqual(["same 1", "same 2"]);
  });

  it("refuses a subscription whose keys are not a P-256 key and an auth secret", () => {
    const b = browser();
    const short = { ...b.subscription, keys: { ...b.subscription.keys, p256dh: "AAAA" } };
    expect(() => encryptPayload(short.keys, Buffer.from("x"))).toThrow(/not a P-256 public key/);
    // 65 bytes in the uncompressed form, but no point of the curve.
    const offCurve = Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString("base64url");
    const notAPoint = { ...b.subscription, keys: { ...b.subscription.keys, p256dh: offCurve } };
    expect(() => encryptPayload(notAPoint.keys, Buffer.from("x"))).toThrow();
    const noAuth = { ...b.subscription, keys: { ...b.subscription.keys, auth: "" } };
    expect(() => encryptPayload(noAuth.keys, Buffer.from("x"))).toThrow(/auth secret/);
  });
});
