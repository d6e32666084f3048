import { pooledRandom } from "./random.ts";

/** The last id made in this process: its time, and its bytes (the next one counts on from them). */
let lastMs = -1;
const last = new Uint8Array(16);

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then random bits. Time-ordered, so new
 * rows land at the right edge of the primary-key index and ids sort by creation time. Ids are
 * identifiers, not secrets (credentials are minted elsewhere, from crypto.randomInt).
 *
 * Monotonic within the process (RFC 9562, 6.2, method 2): an id made in the same millisecond
 * as the last, or with a clock stepped back (NTP correcting a clock that was ahead, a virtual
 * machine resumed), keeps the last one's time and adds a random 1 to 2^24 to its low 56 bits
 * (past their top, the time moves on by 1 ms). So ids made after a step sort after those made
 * before it, and those of one millisecond in the order they were made. Before, an hour's step
 * back made the next hour's notifications sort before the previous hour's, in lists and for
 * `replace_key`, which replaces the project's last notification before it by id.
 */
export function uuidv7(now = Date.now()): string {
  if (now > lastMs || !countOn(last)) {
    lastMs = Math.max(now, lastMs + 1);
    fresh(last, lastMs);
  }
  return text(last);
}

/**
 * A UUIDv7 of exactly the time `ms`, outside the process's sequence: for a row dated in the
 * past (an import, a test), whose id must fall in its month's id range (usage, retention).
 */
export function uuidv7At(ms: number): string {
  const b = new Uint8Array(16);
  fresh(b, ms);
  return text(b);
}

/** `b`, every byte: the time `ms`, random bits, the version and the variant. */
function fresh(b: Uint8Array, ms: number): void {
  b.set(pooledRandom(10), 6);
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = ((b[6] as number) & 0x0f) | 0x70;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
}

function text(b: Uint8Array): string {
  const hex = Buffer.from(b).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Adds a random 1..2^24 to the low 56 bits of the id `b`; false when that overflowed them (`b`
 * is then to be made afresh: `fresh` writes every byte).
 */
function countOn(b: Uint8Array): boolean {
  const r = pooledRandom(3);
  let carry = 1 + (r[0] as number) + ((r[1] as number) << 8) + ((r[2] as number) << 16);
  for (let i = 15; i >= 9 && carry > 0; i--) {
    const sum = (b[i] as number) + carry;
    b[i] = sum & 0xff;
    carry = sum >>> 8;
  }
  return carry === 0;
}
