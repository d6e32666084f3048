import { createHash } from "node:crypto";

/** JSON with object keys sorted at every depth: equal JSON values give equal strings. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fingerprint an idempotency record keeps of its request: the SHA-256 of the request's
 * canonical JSON, so key order and whitespace do not matter but every value does.
 */
export function requestFingerprint(request: unknown): Buffer {
  return createHash("sha256").update(canonicalJson(request)).digest();
}
