/**
 * Push tokens at rest (docs/delivery.md): AES-256-GCM with a key id per row so keys can rotate, the
 * row's identity as associated data so a ciphertext cannot be moved to another row, and an
 * HMAC-SHA-256 blind index so that the same token is found (and not registered twice) without
 * decrypting anything. The index key never rotates: changing it would orphan every index.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  type KeyObject,
  randomBytes,
} from "node:crypto";

export interface PushTokenKey {
  /** Short identifier stored with each row, e.g. `k2026a`. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export interface Sealed {
  keyId: string;
  /** 12-byte nonce ‖ ciphertext ‖ 16-byte tag. */
  box: Buffer;
}

export class PushTokenKeyRing {
  /** Newest first: the first key encrypts, any key decrypts. */
  readonly keys: readonly PushTokenKey[];
  /**
   * The keys as KeyObjects, made once: given a Buffer, Node 24 spends ~9 µs per cipher or HMAC
   * telling it from a KeyObject (against ~1 µs), and a fan-out opens one token per device.
   */
  readonly #secrets: ReadonlyMap<string, KeyObject>;
  readonly #indexKey: KeyObject;
  /**
   * The tokens opened last, by row identity, with the exact sealed box each came from: a
   * fan-out to devices sent to before opens none of them again (an open cost 4-16 µs of the
   * event loop a push). A box that differs in any byte, or another row's, is opened (and
   * authenticated) afresh. Plaintext in memory adds nothing to what the process can read: it
   * holds the keys. Bounded; the oldest entry leaves first.
   */
  readonly #opened = new Map<string, { keyId: string; box: Uint8Array; plaintext: string }>();
  readonly #mostOpened: number;

  /** `mostOpened`: tokens kept opened (0: none). */
  constructor(keys: readonly PushTokenKey[], indexKey: Buffer, mostOpened = 10_000) {
    if (keys.length === 0) throw new Error("the token key ring is empty");
    for (const k of [...keys.map((k) => k.key), indexKey]) {
      if (k.length !== 32) throw new Error("token keys must be 32 bytes");
    }
    this.keys = keys;
    // Reversed, so that of two keys with one id the first (newest) wins, as a search would.
    this.#secrets = new Map([...keys].reverse().map((k) => [k.id, createSecretKey(k.key)]));
    this.#indexKey = createSecretKey(indexKey);
    this.#mostOpened = mostOpened;
  }

  /** How many opened tokens are kept. */
  get keptOpen(): number {
    return this.#opened.size;
  }

  get current(): PushTokenKey {
    return this.keys[0] as PushTokenKey;
  }

  seal(plaintext: string, rowIdentity: string): Sealed {
    const { id } = this.current;
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#secrets.get(id) as KeyObject, iv);
    cipher.setAAD(Buffer.from(rowIdentity));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return { keyId: id, box: Buffer.concat([iv, body, cipher.getAuthTag()]) };
  }

  /** Throws when the key is unknown or the box was tampered with or moved to another row. */
  open(sealed: Sealed, rowIdentity: string): string {
    const known = this.#opened.get(rowIdentity);
    if (known?.keyId === sealed.keyId && sealed.box.equals(known.box)) return known.plaintext;
    const plaintext = this.#decrypt(sealed, rowIdentity);
    if (this.#mostOpened > 0) {
      if (known) this.#opened.delete(rowIdentity);
      else if (this.#opened.size >= this.#mostOpened) {
        this.#opened.delete(this.#opened.keys().next().value as string);
      }
      const box = new Uint8Array(sealed.box);
      this.#opened.set(rowIdentity, { keyId: sealed.keyId, box, plaintext });
    }
    return plaintext;
  }

  #decrypt(sealed: Sealed, rowIdentity: string): string {
    const key = this.#secrets.get(sealed.keyId);
    if (!key) throw new Error(`token key ${sealed.keyId} is not in the key ring`);
    const iv = sealed.box.subarray(0, 12);
    const tag = sealed.box.subarray(sealed.box.length - 16);
    const decipher = createDecipheriv("aes-256-gcm", key, iv);
    decipher.setAAD(Buffer.from(rowIdentity));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(sealed.box.subarray(12, sealed.box.length - 16)),
      decipher.final(),
    ]).toString("utf8");
  }

  /**
   * Which keys these are, revealing none of them (an HMAC of a fixed text under each): the
   * ring's keys by id, and the blind-index key. A database records them (ops/key-check.ts).
   */
  verifiers(): { keys: { id: string; verifier: string }[]; index: string } {
    const of = (k: KeyObject) =>
      createHmac("sha256", k).update("herald key check").digest("base64url");
    return {
      keys: this.keys.map((k) => ({
        id: k.id,
        verifier: of(this.#secrets.get(k.id) as KeyObject),
      })),
      index: of(this.#indexKey),
    };
  }

  /** Deterministic, keyed: equal tokens of a platform give equal indexes. */
  blindIndex(platform: string, token: string): Buffer {
    return createHmac("sha256", this.#indexKey).update(`${platform}\0${token}`).digest();
  }
}

/** Parses `id:base64,id:base64` (newest first). */
export function parseKeyList(raw: string): PushTokenKey[] {
  return raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [id, b64] = entry.split(":");
      if (!id || !b64) throw new Error("HERALD_TOKEN_KEYS entries are id:base64key");
      return { id, key: Buffer.from(b64, "base64") };
    });
}

export function generateKeyMaterial(): { keys: string; indexKey: string } {
  const id = `k${new Date().toISOString().slice(0, 10).replaceAll("-", "")}`;
  return {
    keys: `${id}:${randomBytes(32).toString("base64")}`,
    indexKey: randomBytes(32).toString("base64"),
  };
}
