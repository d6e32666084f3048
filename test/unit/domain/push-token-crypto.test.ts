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
  it("keeps what it opened for the same box of the same row only: a changed or moved box is opened afresh", () => {
    const r = ring([1]);
    const sealed = r.seal("token", "device-1");
    expect(r.open(sealed, "device-1")).toBe("token");
    // A copy of the same bytes (as each claim reads it) is the same box.
    expect(r.open({ keyId: "k1", box: Buffer.from(sealed.box) }, "device-1")).toBe("token");
    // Moved to another row, altered, or under another key id: authenticated again, and refused.
    expect(() => r.open(sealed, "device-2")).toThrow();
    const altered = Buffer.from(sealed.box);
    altered[altered.length - 1] = (altered[altered.length - 1] as number) ^ 1;
    expect(() => r.open({ keyId: "k1", box: altered }, "device-1")).toThrow();
    expect(() => r.open({ keyId: "k7", box: sealed.box }, "device-1")).toThrow(
      /not in the key ring/,
    );
    // The row's token changed (the device registered again): the new one, not the kept one.
    const again = r.seal("new-token", "device-1");
    expect(r.open(again, "device-1")).toBe("new-token");
    expect(r.open(sealed, "device-1")).toBe("token");
  });
  it("keeps at most as many opened tokens as it is told, and none when told 0", () => {
    const r = new PushTokenKeyRing(
      [{ id: "k1", key: Buffer.alloc(32, 1) }],
      Buffer.alloc(32, 9),
      2,
    );
    const rows = ["d1", "d2", "d3"].map((d) => [d, r.seal(`token-${d}`, d)] as const);
    for (const [d, s] of rows) expect(r.open(s, d)).toBe(`token-${d}`);
    expect(r.keptOpen).toBe(2);
    const none = new PushTokenKeyRing(
      [{ id: "k1", key: Buffer.alloc(32, 1) }],
      Buffer.alloc(32, 9),
      0,
    );
    const [d, s] = rows[0] as (typeof rows)[number];
    expect(none.open(s, d)).toBe(`token-${d}`);
    expect(none.keptOpen).toBe(0);
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
