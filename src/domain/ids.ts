import { pooledRandom } from "./random.ts";

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Time-ordered, so new
 * rows land at the right edge of the primary-key index and ids sort by creation time. Ids are
 * identifiers, not secrets (credentials are minted elsewhere, from crypto.randomInt).
 */
export function uuidv7(now = Date.now()): string {
  const b = new Uint8Array(16);
  b.set(pooledRandom(10), 6);
  let ms = now;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = ((b[6] as number) & 0x0f) | 0x70;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = Buffer.from(b).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
