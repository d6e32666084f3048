/** ES256 JWT verification, as a provider does it (raw r‖s signatures, RFC 7518 §3.4). */
import { createPublicKey, type KeyObject, verify } from "node:crypto";

export interface Jwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
}

/**
 * Tokens already verified with a key. A provider token is reused (APNs for up to an hour, a
 * VAPID token as long as Herald keeps it): its signature is checked once, as a provider can, and
 * every claim on each request. A token that fails is never kept.
 */
const verified = new WeakMap<KeyObject, Map<string, Jwt>>();

export function verifyEs256(token: string, key: KeyObject): Jwt {
  const known = verified.get(key)?.get(token);
  if (known) return known;
  const jwt = checkEs256(token, key);
  const tokens = verified.get(key) ?? new Map<string, Jwt>();
  verified.set(key, tokens);
  if (tokens.size > 1000) tokens.clear();
  tokens.set(token, jwt);
  return jwt;
}

function checkEs256(token: string, key: KeyObject): Jwt {
  const [h, c, s] = token.split(".");
  if (!h || !c || !s) throw new Error("not a JWT");
  const header = JSON.parse(Buffer.from(h, "base64url").toString()) as Record<string, unknown>;
  if (header.alg !== "ES256") throw new Error(`alg ${String(header.alg)}`);
  const ok = verify(
    "sha256",
    Buffer.from(`${h}.${c}`),
    { key, dsaEncoding: "ieee-p1363" },
    Buffer.from(s, "base64url"),
  );
  if (!ok) throw new Error("bad signature");
  return { header, claims: JSON.parse(Buffer.from(c, "base64url").toString()) };
}

/** A P-256 public key from its uncompressed point (65 bytes), as VAPID's `k=` carries it. */
const p256Keys = new Map<string, KeyObject>();
export function p256FromRaw(raw: Buffer): KeyObject {
  const id = raw.toString("base64url");
  const known = p256Keys.get(id);
  if (known) return known;
  const key = p256Key(raw);
  if (p256Keys.size > 1000) p256Keys.clear();
  p256Keys.set(id, key);
  return key;
}

function p256Key(raw: Buffer): KeyObject {
  if (raw.length !== 65 || raw[0] !== 4) throw new Error("not an uncompressed P-256 point");
  return createPublicKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: raw.subarray(1, 33).toString("base64url"),
      y: raw.subarray(33).toString("base64url"),
    },
    format: "jwk",
  });
}

/** RS256 (what Google service accounts sign OAuth assertions with). */
export function verifyRs256(token: string, key: KeyObject): Jwt {
  const [h, c, s] = token.split(".");
  if (!h || !c || !s) throw new Error("not a JWT");
  const header = JSON.parse(Buffer.from(h, "base64url").toString()) as Record<string, unknown>;
  if (header.alg !== "RS256") throw new Error(`alg ${String(header.alg)}`);
  if (!verify("sha256", Buffer.from(`${h}.${c}`), key, Buffer.from(s, "base64url"))) {
    throw new Error("bad signature");
  }
  return { header, claims: JSON.parse(Buffer.from(c, "base64url").toString()) };
}
