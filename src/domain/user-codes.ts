/**
 * Short codes a person reads and types: device-login user codes (RFC 8628) and pairing codes.
 * No vowels (no words), no look-alikes (RFC 8628 §6.1); shown as `BCDF-GHJK`, accepted in any
 * case and with any separators.
 */
import { randomInt } from "node:crypto";

const alphabet = "BCDFGHJKLMNPQRSTVWXZ";
const length = 8;

export function mintUserCode(): string {
  let s = "";
  for (let i = 0; i < length; i++) s += alphabet[randomInt(alphabet.length)];
  return s;
}

/** The stored form of a code as typed: upper case, letters only. */
export function normalizeUserCode(code: string): string {
  return code.toUpperCase().replace(/[^A-Z]/g, "");
}

/** The displayed form: two groups of four. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}
