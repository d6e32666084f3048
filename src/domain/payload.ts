/**
 * The preview a push carries: notification id, topic, title and as much of the message as fits.
 * The device fetches the full notification (metadata included) over the API. Whatever the title,
 * message and metadata, the encoded push stays within the provider's limit.
 */
export interface Preview {
  id: string;
  topic: string;
  title: string;
  message: string;
  /** True when `message` was cut. */
  truncated: boolean;
}

type Base = Omit<Preview, "truncated">;

/**
 * Cuts `message` (by code points, never inside a character) until `encode(preview)` is at most
 * `limitBytes`: the longest cut that fits, ending in "…".
 *
 * A cut's size is worked out rather than encoded: an encoder that writes the message k times as
 * a JSON string adds k × the message's escaped UTF-8 bytes to what it writes for an empty one, so
 * three small encodes and one pass over the message find the cut, and one encode of it checks the
 * sum. Encoding every candidate of a binary search cost 240-290 µs a push for a 2,048-character
 * message in a script without Latin letters, on every device of a fan-out (BENCHMARKS.md,
 * thirty-sixth session). An encoder the sum does not describe gets that binary search.
 */
export function fitPreview(
  base: Base,
  limitBytes: number,
  encode: (p: Preview) => string,
): Preview {
  const size = (p: Preview) => Buffer.byteLength(encode(p), "utf8");
  const full: Preview = { ...base, truncated: false };
  if (size(full) <= limitBytes) return full;
  const summed = byEscapedBytes(base, limitBytes, size);
  const best = summed?.preview ?? bySearch(base, limitBytes, size);
  if ((summed?.bytes ?? size(best)) > limitBytes) {
    throw new Error("preview does not fit even without a message");
  }
  return best;
}

const cutTo = (base: Base, message: string): Preview => ({
  ...base,
  message: `${message}…`,
  truncated: true,
});

/** The bytes JSON.stringify writes for code point `c` inside a string, in UTF-8. */
function escapedBytes(c: number): number {
  if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c) return 2; // \" \\ \b \f
  if (c === 0x0a || c === 0x0d || c === 0x09) return 2; // \n \r \t
  if (c < 0x20) return 6; // \u00XX
  if (c < 0x80) return 1;
  if (c < 0x800) return 2;
  if (c >= 0xd800 && c <= 0xdfff) return 6; // a lone surrogate: \uDXXX
  return c < 0x10000 ? 3 : 4;
}

/** The longest cut by the sum above, if the encoder writes the message as the sum says. */
function byEscapedBytes(
  base: Base,
  limitBytes: number,
  size: (p: Preview) => number,
): { preview: Preview; bytes: number } | undefined {
  // What an empty cut ("…" alone) takes, and what each byte of the message adds to it.
  const empty = size(cutTo(base, ""));
  const times = (size(cutTo(base, "…")) - empty) / 3; // "…" is three bytes, unescaped
  if (!Number.isInteger(times) || times < 1) return undefined;
  const fits = (escaped: number) => empty + times * escaped <= limitBytes;
  const m = base.message;
  let end = 0;
  let escaped = 0;
  while (end < m.length) {
    const c = m.codePointAt(end) as number;
    const add = escapedBytes(c);
    if (!fits(escaped + add)) break;
    escaped += add;
    end += c > 0xffff ? 2 : 1;
  }
  const preview = cutTo(base, m.slice(0, end));
  const bytes = size(preview);
  return bytes === empty + times * escaped ? { preview, bytes } : undefined;
}

/** The longest cut by binary search: the encoding is monotonic in the message's length. */
function bySearch(base: Base, limitBytes: number, size: (p: Preview) => number): Preview {
  const chars = Array.from(base.message);
  const cut = (n: number) => cutTo(base, chars.slice(0, n).join(""));
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(cut(mid)) <= limitBytes) lo = mid;
    else hi = mid - 1;
  }
  return cut(lo);
}
