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

/**
 * Cuts `message` (by code points, never inside a character) until `encode(preview)` is at most
 * `limitBytes`. Binary search: the encoding is monotonic in the message length.
 */
export function fitPreview(
  base: { id: string; topic: string; title: string; message: string },
  limitBytes: number,
  encode: (p: Preview) => string,
): Preview {
  const size = (p: Preview) => Buffer.byteLength(encode(p), "utf8");
  const full: Preview = { ...base, truncated: false };
  if (size(full) <= limitBytes) return full;
  const chars = Array.from(base.message);
  const cut = (n: number): Preview => ({
    ...base,
    message: `${chars.slice(0, n).join("")}…`,
    truncated: true,
  });
  let lo = 0;
  let hi = chars.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(cut(mid)) <= limitBytes) lo = mid;
    else hi = mid - 1;
  }
  const best = cut(lo);
  if (size(best) > limitBytes) throw new Error("preview does not fit even without a message");
  return best;
}
