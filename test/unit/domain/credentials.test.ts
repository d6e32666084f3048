import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  digestCredential,
  digestCredentialText,
  displayPrefix,
  mintCredential,
  parseCredential,
} from "../../../src/domain/credentials.ts";
import { formatUserCode, mintUserCode, normalizeUserCode } from "../../../src/domain/user-codes.ts";

describe("credentials", () => {
  it("mints each kind with its prefix, and recognises it", () => {
    expect(parseCredential(mintCredential("apiKey"))).toBe("apiKey");
    expect(parseCredential(mintCredential("cliToken"))).toBe("cliToken");
    expect(parseCredential(mintCredential("device"))).toBe("device");
  });
  it("refuses a secret whose checksum does not match (a typo) with no lookup", () => {
    const good = mintCredential("apiKey");
    const typo = `${good.slice(0, 10)}${good[10] === "A" ? "B" : "A"}${good.slice(11)}`;
    expect(parseCredential(typo)).toBeUndefined();
    expect(parseCredential(good.slice(0, -1))).toBeUndefined();
    expect(parseCredential(`hx_${good.slice(3)}`)).toBeUndefined();
  });
  it("stores a digest and shows a prefix, never the secret", () => {
    const s = mintCredential("cliToken");
    expect(digestCredential(s).length).toBe(32);
    expect(displayPrefix(s)).toBe(`${s.slice(0, 7)}…`);
  });
  it("digests a secret as SHA-256, as bytes and as the base64 the verifier keys its cache by", () => {
    const s = mintCredential("apiKey");
    const sha256 = createHash("sha256").update(s).digest();
    expect(digestCredential(s).equals(sha256)).toBe(true);
    expect(digestCredentialText(s)).toBe(sha256.toString("base64"));
    expect(digestCredentialText(`${s}x`)).not.toBe(digestCredentialText(s));
  });
});

describe("user codes", () => {
  it("are 8 consonants, shown as two groups, accepted however typed", () => {
    const code = mintUserCode();
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    expect(normalizeUserCode(formatUserCode(code).toLowerCase())).toBe(code);
    expect(formatUserCode("BCDFGHJK")).toBe("BCDF-GHJK");
  });
});
