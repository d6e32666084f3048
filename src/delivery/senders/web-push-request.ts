/**
 * One Web Push request: the payload encrypted as RFC 8291 says (aes128gcm, RFC 8188, one record)
 * and POSTed to the subscription's endpoint with RFC 8030's headers. `web-push` did both (and
 * signed the VAPID header, now vapid.ts). Its encryption (`http_ece`) derives the keys with
 * one HMAC per HKDF step: 184 µs per message against 119 µs here when measured, with HKDF in
 * one native call per key. The key agreement is KeyObjects (`agree`), with the browser's key
 * imported once: 178-189 -> 150-154 µs a message on a slower day. HKDF's keys are plain bytes:
 * on Node 24 a secret KeyObject a step (three made and collected a message) costs more than
 * telling a Buffer from a KeyObject, which it was meant to save (141-157 -> 128-131 µs a
 * message; a fan-out to 10,000 browsers 450 -> 408 µs of the server's CPU a push, sixty-first
 * session). A fan-out to thousands of browsers pays that per device. The fake push service
 * (test/fakes/web-push-server.ts) decrypts every message with `http_ece` and checks the headers.
 */
import {
  createCipheriv,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
} from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { pooledRandom } from "../../domain/random.ts";
import type { PushServices } from "./push-services.ts";

/** A browser's subscription, as it gave it (PushSubscription.toJSON()). */
export interface Subscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** RFC 8188's record size: the plaintext limit (web-push.ts) keeps a message to one record. */
const recordSize = 4096;
const keyInfo = Buffer.from("WebPush: info\0");
const cekInfo = Buffer.from("Content-Encoding: aes128gcm\0");
const nonceInfo = Buffer.from("Content-Encoding: nonce\0");
/** The padding delimiter of a last record (RFC 8188 §2). */
const lastRecord = Buffer.from([2]);
/** The first byte of an uncompressed P-256 point (SEC 1). */
const uncompressed = Buffer.from([4]);

/**
 * Browsers' public keys as KeyObjects, imported once: a fan-out meets the same subscriptions
 * again, and importing one (with its curve check) is 33-38 µs of the message's ECDH. The most
 * recently used `browserKeysKept` are kept; they are public keys.
 */
const browserKeys = new Map<string, KeyObject>();
const browserKeysKept = 10_000;

function browserKeyOf(p256dh: string, raw: Buffer): KeyObject {
  let k = browserKeys.get(p256dh);
  if (k) {
    browserKeys.delete(p256dh);
  } else {
    const coordinate = (from: number) => raw.subarray(from, from + 32).toString("base64url");
    k = createPublicKey({
      key: { kty: "EC", crv: "P-256", x: coordinate(1), y: coordinate(33) },
      format: "jwk",
    });
    if (browserKeys.size >= browserKeysKept) {
      browserKeys.delete(browserKeys.keys().next().value as string);
    }
  }
  browserKeys.set(p256dh, k);
  return k;
}

/**
 * The message's own ephemeral P-256 key pair, the secret it shares with the browser's key, and
 * its public key as the uncompressed point the header carries. KeyObjects and `diffieHellman`:
 * 96 µs, where `createECDH` (raw points, decoded and checked on every call) took 140 µs.
 */
function agree(browserKey: KeyObject): { shared: Buffer; ownKey: Buffer } {
  const own = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const shared = diffieHellman({ privateKey: own.privateKey, publicKey: browserKey });
  const jwk = own.publicKey.export({ format: "jwk" });
  const ownKey = Buffer.concat([
    uncompressed,
    Buffer.from(jwk.x as string, "base64url"),
    Buffer.from(jwk.y as string, "base64url"),
  ]);
  return { shared, ownKey };
}

/**
 * The message body for a subscription's keys: salt, record size, the sender's ephemeral public
 * key, then the one record. Keys that are not a P-256 public key and a 16-byte secret are
 * refused.
 */
export function encryptPayload(keys: Subscription["keys"], plaintext: Buffer): Buffer {
  const browserKey = Buffer.from(keys.p256dh, "base64url");
  const authSecret = Buffer.from(keys.auth, "base64url");
  if (browserKey.length !== 65 || browserKey[0] !== uncompressed[0] || authSecret.length < 16) {
    throw new Error("the subscription's keys are not a P-256 public key and an auth secret");
  }
  const { shared, ownKey } = agree(browserKeyOf(keys.p256dh, browserKey));
  const info = Buffer.concat([keyInfo, browserKey, ownKey]);
  const ikm = new Uint8Array(hkdfSync("sha256", shared, authSecret, info, 32));
  const salt = pooledRandom(16);
  const cek = new Uint8Array(hkdfSync("sha256", ikm, salt, cekInfo, 16));
  const nonce = new Uint8Array(hkdfSync("sha256", ikm, salt, nonceInfo, 12));
  const cipher = createCipheriv("aes-128-gcm", cek, nonce);
  const head = Buffer.alloc(21);
  salt.copy(head);
  head.writeUInt32BE(recordSize, 16);
  head[20] = ownKey.length;
  return Buffer.concat([
    head,
    ownKey,
    cipher.update(plaintext),
    cipher.update(lastRecord),
    cipher.final(),
    cipher.getAuthTag(),
  ]);
}

/** A push service's answer other than 2xx. */
export class PushServiceError extends Error {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  constructor(statusCode: number, headers: IncomingHttpHeaders) {
    super(`the push service answered HTTP ${statusCode}`);
    this.statusCode = statusCode;
    this.headers = headers;
  }
}

export interface PushRequest {
  /** Seconds the push service keeps it for an offline browser. */
  ttl: number;
  urgency: string;
  topic: string;
  authorization: string;
  /** The connections to push services (push-services.ts: HTTP/2 where offered, else HTTP/1.1). */
  services: PushServices;
}

/**
 * POSTs an encrypted message; resolves on 2xx, rejects with a PushServiceError for another
 * status, or with the network's error (unreachable, reset, timed out).
 */
export async function postPush(endpoint: string, body: Buffer, r: PushRequest): Promise<void> {
  const res = await r.services.post(new URL(endpoint), {
    headers: {
      ttl: String(r.ttl),
      urgency: r.urgency,
      topic: r.topic,
      authorization: r.authorization,
      "content-type": "application/octet-stream",
      "content-encoding": "aes128gcm",
      "content-length": String(body.length),
    },
    body,
  });
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw new PushServiceError(res.statusCode, res.headers);
  }
}
