/**
 * What differs between a machine's keys and its database's (ops/key-check.ts): the same key id
 * or index or VAPID key with other material, or no token key in common; a rotation (a new key
 * beside one the database knows, or one dropped) is no difference.
 */
import { describe, expect, it } from "vitest";
import type { KeyCheck } from "../../../src/db/index.ts";
import { keyDifference } from "../../../src/ops/key-check.ts";

const token = (key_id: string, verifier: string): KeyCheck => ({
  purpose: "token",
  key_id,
  verifier,
});
const index = (verifier: string): KeyCheck => ({ purpose: "index", key_id: "", verifier });
const vapid = (verifier: string): KeyCheck => ({ purpose: "vapid", key_id: "", verifier });
const stored = [token("k1", "a"), index("i"), vapid("v")];

describe("keyDifference", () => {
  it("is none for the same keys, a new database, or a rotation either way", () => {
    expect(keyDifference(stored, stored)).toBeUndefined();
    expect(keyDifference([], stored)).toBeUndefined();
    expect(keyDifference(stored, [token("k2", "b"), ...stored])).toBeUndefined();
    const both = [token("k2", "b"), ...stored];
    expect(keyDifference(both, [token("k2", "b"), index("i"), vapid("v")])).toBeUndefined();
  });

  it("names what differs, one or several", () => {
    expect(keyDifference(stored, [token("k1", "a"), index("i"), vapid("other")])).toBe(
      "the VAPID key differs from the database's",
    );
    expect(keyDifference(stored, [token("k1", "x"), index("x"), vapid("v")])).toBe(
      "token key k1, the index key differ from the database's",
    );
  });

  it("names both rings when they share no key", () => {
    expect(keyDifference(stored, [token("k9", "z"), index("i"), vapid("v")])).toBe(
      "the database's token keys are k1; this machine has k9",
    );
  });
});
