import { describe, expect, it } from "vitest";
import {
  generateKeyMaterial,
  PushTokenKeyRing,
  parseKeyList,
} from "../../../src/domain/push-token-crypto.ts";

const ring = (ids: number[]) =>
  new PushTokenKeyRing(
    ids.map((i) => ({ id: `k${i}`, key: Buffer.alloc(32, i) })),
    Buffer.alloc(32, 9),
  );

describe("PushTokenKeyRing", () => {
  it("seals under the newest key and opens under any key of the ring", () => {
    const old = ring([1]);
    const sealedOld = old.seal("apns-token", "device-1");
    const rotated = ring([2, 1]);
    expect(rotated.seal("x", "d").keyId).toBe("k2");
    expect(rotated.open(sealedOld, "device-1")).toBe("apns-token");
    expect(sealedOld.box.includes(Buffer.from("apns-token"))).toBe(false);
  });
  it("refuses a ciphertext moved to another row, or altered", () => {
    const r = ring([1]);
    const sealed = r.seal("token", "device-1");
    expect(() => r.open(sealed, "device-2")).toThrow();
    const box = Buffer.from(sealed.box);
    box[box.length - 1] = (box[box.length - 1] as number) ^ 1;
    expect(() => r.open({ keyId: sealed.keyId, box }, "device-1")).toThrow();
  });
  it("finds the same token by a blind index that does not depend on the encryption key", () => {
    expect(
      ring([1])
        .blindIndex("ios", "t")
        .equals(ring([2, 1]).blindIndex("ios", "t")),
    ).toBe(true);
    expect(
      ring([1])
        .blindIndex("ios", "t")
        .equals(ring([1]).blindIndex("android", "t")),
    ).toBe(false);
  });
  it("reads the key list it generates, and refuses keys of the wrong size", () => {
    const m = generateKeyMaterial();
    expect(parseKeyList(m.keys)[0]?.key.length).toBe(32);
    expect(
      () => new PushTokenKeyRing([{ id: "a", key: Buffer.alloc(16) }], Buffer.alloc(32)),
    ).toThrow(/32 bytes/);
  });
});
