/**
 * VAPID (src/delivery/senders/vapid.ts): keys in the encoding browsers and the `web-push`
 * library use, either way round; a header whose ES256 signature verifies with the public key and
 * whose claims name the push service, a lifetime within RFC 8292's 24 hours and the contact;
 * one signature per push service per hour; and malformed keys refused with the half named.
 */
import { createPublicKey, verify } from "node:crypto";
import { describe, expect, it } from "vitest";
import webpush from "web-push";
import {
  generateVapidKeys,
  vapidAuthorization,
  vapidSigningKey,
} from "../../../src/delivery/senders/vapid.ts";

const subject = "mailto:owner@example.com";

function parse(header: string) {
  const m = /^vapid t=([\w-]+)\.([\w-]+)\.([\w-]+), k=([\w-]+)$/.exec(header);
  if (!m) throw new Error(`not a VAPID header: ${header}`);
  const [, head, claims, signature, k] = m as unknown as string[];
  return {
    head: JSON.parse(Buffer.from(head as string, "base64url").toString()),
    claims: JSON.parse(Buffer.from(claims as string, "base64url").toString()),
    signed: `${head}.${claims}`,
    signature: Buffer.from(signature as string, "base64url"),
    k: k as string,
  };
}

function verifies(publicKey: string, signed: string, signature: Buffer): boolean {
  const point = Buffer.from(publicKey, "base64url");
  const key = createPublicKey({
    format: "jwk",
    key: {
      kty: "EC",
      crv: "P-256",
      x: point.subarray(1, 33).toString("base64url"),
      y: point.subarray(33).toString("base64url"),
    },
  });
  return verify("sha256", Buffer.from(signed), { key, dsaEncoding: "ieee-p1363" }, signature);
}

describe("VAPID", () => {
  it("signs a header the public key verifies, naming the push service, expiry and contact", () => {
    const keys = generateVapidKeys();
    expect(Buffer.from(keys.publicKey, "base64url")).toHaveLength(65);
    expect(Buffer.from(keys.privateKey, "base64url")).toHaveLength(32);
    const now = Math.floor(Date.now() / 1000);
    const t = parse(vapidAuthorization({ ...keys, subject })("https://push.example:8443/send/abc"));
    expect(t.head).toEqual({ typ: "JWT", alg: "ES256" });
    expect(t.claims.aud).toBe("https://push.example:8443");
    expect(t.claims.sub).toBe(subject);
    expect(t.claims.exp).toBeGreaterThan(now + 3600);
    expect(t.claims.exp).toBeLessThanOrEqual(now + 24 * 3600);
    expect(t.k).toBe(keys.publicKey);
    expect(t.signature).toHaveLength(64);
    expect(verifies(keys.publicKey, t.signed, t.signature)).toBe(true);
    expect(verifies(generateVapidKeys().publicKey, t.signed, t.signature)).toBe(false);
  });

  it("works with keys the web-push library made, and web-push signs with ours", () => {
    const theirs = webpush.generateVAPIDKeys();
    const ours = parse(vapidAuthorization({ ...theirs, subject })("https://push.example/x"));
    expect(verifies(theirs.publicKey, ours.signed, ours.signature)).toBe(true);
    const mine = generateVapidKeys();
    const { Authorization } = webpush.getVapidHeaders(
      "https://push.example",
      subject,
      mine.publicKey,
      mine.privateKey,
      "aes128gcm",
    );
    const t = parse(Authorization);
    expect(verifies(mine.publicKey, t.signed, t.signature)).toBe(true);
  });

  it("signs once per push service, not per push", () => {
    const sign = vapidAuthorization({ ...generateVapidKeys(), subject });
    const a = sign("https://a.example/1");
    expect(sign("https://a.example/2")).toBe(a);
    expect(sign("https://b.example/1")).not.toBe(a);
  });

  it("refuses malformed keys, naming the half at fault", () => {
    const good = generateVapidKeys();
    expect(() => vapidSigningKey({ ...good, publicKey: "abc" })).toThrow(/public key/);
    expect(() => vapidSigningKey({ ...good, privateKey: "abc" })).toThrow(/private key/);
    expect(() => vapidSigningKey({ ...good, privateKey: generateVapidKeys().privateKey })).toThrow(
      /does not match/,
    );
  });
});
