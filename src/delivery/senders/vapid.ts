/**
 * VAPID (RFC 8292): the application server's P-256 key pair, and the `Authorization` header
 * that proves a push came from it: `vapid t=<JWT>, k=<public key>`, the JWT signed with ES256
 * and naming the push service (aud), a lifetime (exp) and a contact (sub). Made with
 * node:crypto alone; the `web-push` library re-encoded the key with a pure-JS ASN.1 and big-number
 * library, about 2.5 MB of a serving process's memory (BENCHMARKS.md, issue 20).
 */
import {
  createECDH,
  createPrivateKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
} from "node:crypto";

export interface VapidKeys {
  /** The uncompressed P-256 point (65 bytes), URL-safe base64: what browsers subscribe with. */
  publicKey: string;
  /** The private scalar (32 bytes), URL-safe base64. */
  privateKey: string;
  /** `mailto:` or `https:` contact for push services. */
  subject: string;
}

/** A new key pair, encoded as browsers and push services expect. */
export function generateVapidKeys(): { publicKey: string; privateKey: string } {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const point = Buffer.concat([
    Buffer.of(4),
    Buffer.from(jwk.x as string, "base64url"),
    Buffer.from(jwk.y as string, "base64url"),
  ]);
  return { publicKey: point.toString("base64url"), privateKey: jwk.d as string };
}

/** The signing key of a pair; throws, saying which, when either half is malformed. */
export function vapidSigningKey(keys: Pick<VapidKeys, "publicKey" | "privateKey">): KeyObject {
  const point = Buffer.from(keys.publicKey, "base64url");
  if (point.length !== 65 || point[0] !== 4) {
    throw new Error("the VAPID public key is not a P-256 point (65 bytes, URL-safe base64)");
  }
  const scalar = Buffer.from(keys.privateKey, "base64url");
  if (scalar.length !== 32) {
    throw new Error("the VAPID private key is not 32 bytes of URL-safe base64");
  }
  let derived: Buffer;
  try {
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(scalar);
    derived = ecdh.getPublicKey();
  } catch {
    throw new Error("the VAPID private key is not a P-256 private key");
  }
  if (!derived.equals(point))
    throw new Error("the VAPID private key does not match its public key");
  const coordinate = (from: number) => point.subarray(from, from + 32).toString("base64url");
  return createPrivateKey({
    format: "jwk",
    key: { kty: "EC", crv: "P-256", d: keys.privateKey, x: coordinate(1), y: coordinate(33) },
  });
}

/** A VAPID token is signed for 12 hours (RFC 8292 allows up to 24) and reused for 1 hour. */
const lifetimeSeconds = 12 * 3600;
const reuseMs = 3600_000;
const jwtHeader = Buffer.from(JSON.stringify({ typ: "JWT", alg: "ES256" })).toString("base64url");

/**
 * The `Authorization` header per push service origin, signed once an hour per push service
 * rather than for every push.
 */
export function vapidAuthorization(vapid: VapidKeys): (endpoint: string) => string {
  const key = vapidSigningKey(vapid);
  const cache = new Map<string, { header: string; signedMs: number }>();
  return (endpoint) => {
    const aud = new URL(endpoint).origin;
    const now = Date.now();
    const hit = cache.get(aud);
    // Wall time: `exp` is. A clock stepped back makes the age negative: sign afresh, or `exp`
    // could be past what push services accept (24 hours from now).
    if (hit && now >= hit.signedMs && now - hit.signedMs < reuseMs) return hit.header;
    const exp = Math.floor(now / 1000) + lifetimeSeconds;
    const claims = Buffer.from(JSON.stringify({ aud, exp, sub: vapid.subject })).toString(
      "base64url",
    );
    const input = `${jwtHeader}.${claims}`;
    const signature = sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" });
    const header = `vapid t=${input}.${signature.toString("base64url")}, k=${vapid.publicKey}`;
    if (cache.size > 1000) cache.clear();
    cache.set(aud, { header, signedMs: now });
    return header;
  };
}
