import { describe, expect, it } from "vitest";
import { fitPreview, type Preview } from "../../../src/domain/payload.ts";
import { seededRandom } from "../../helpers/random.ts";

const encode = JSON.stringify;
const base = { id: "n1", topic: "deploys", title: "Deploy finished" };
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

describe("fitPreview", () => {
  it("keeps a message that fits untouched", () => {
    const p = fitPreview({ ...base, message: "short" }, 4096, encode);
    expect(p).toEqual({ ...base, message: "short", truncated: false });
  });
  it("cuts the longest message that fits, marked with an ellipsis", () => {
    const p = fitPreview({ ...base, message: "x".repeat(5000) }, 200, encode);
    expect(p.truncated).toBe(true);
    expect(p.message.endsWith("…")).toBe(true);
    expect(bytes(encode(p))).toBeLessThanOrEqual(200);
    // One more character would not fit.
    const longer = { ...p, message: `${"x".repeat(Array.from(p.message).length)}…` };
    expect(bytes(encode(longer))).toBeGreaterThan(200);
  });
  it("never cuts inside a character (emoji are several UTF-16 units and UTF-8 bytes)", () => {
    const p = fitPreview({ ...base, message: "🚀".repeat(400) }, 150, encode);
    expect(Array.from(p.message.slice(0, -1)).every((c) => c === "🚀")).toBe(true);
    expect(bytes(encode(p))).toBeLessThanOrEqual(150);
  });
  it("refuses when even an empty message cannot fit", () => {
    expect(() => fitPreview({ ...base, message: "m" }, 10, encode)).toThrow(/does not fit/);
  });
});

/** The longest cut that fits, found by trying every length from the whole message down. */
function longestThatFits(
  base: Omit<Preview, "truncated">,
  limit: number,
  enc: (p: Preview) => string,
): Preview {
  const chars = Array.from(base.message);
  for (let n = chars.length; n >= 0; n--) {
    const p = { ...base, message: `${chars.slice(0, n).join("")}…`, truncated: true };
    if (bytes(enc(p)) <= limit) return p;
  }
  throw new Error("nothing fits");
}

/** Characters JSON escapes or encodes at every width: quotes, controls, lone surrogates, emoji. */
const alphabet = [
  "a",
  " ",
  '"',
  "\\",
  "\n",
  "\t",
  "\u0001",
  "\u001f",
  "\u007f",
  "é",
  "漢",
  "\u2028",
  "🙂",
  "\ud800",
  "\udc00",
];

describe("fitPreview's cut, against trying every length", () => {
  const message = (next: () => number) =>
    Array.from(
      { length: Math.floor(next() * 300) },
      () => alphabet[Math.floor(next() * alphabet.length)],
    ).join("");
  // Each with the most encodes a cut may take: the whole message, an empty cut, "…", the cut.
  const encoders: [string, (p: Preview) => string, number][] = [
    ["the message once", JSON.stringify, 4],
    ["the message twice (title and body)", (p) => JSON.stringify({ ...p, body: p.message }), 4],
    [
      "the flag as text (FCM's data)",
      (p) => JSON.stringify({ ...p, truncated: String(p.truncated) }),
      4,
    ],
    // Not the message as a JSON string: the sum does not hold, and the search answers.
    [
      "the message in base64",
      (p) => JSON.stringify({ ...p, message: Buffer.from(p.message).toString("base64") }),
      Number.POSITIVE_INFINITY,
    ],
  ];
  for (const [name, enc, most] of encoders) {
    it(`cuts where trying every length cuts: ${name}`, () => {
      const next = seededRandom(36);
      for (let i = 0; i < 300; i++) {
        const b = { ...base, message: message(next) };
        const limit =
          bytes(enc({ ...b, message: "…", truncated: true })) + Math.floor(next() * 400);
        const full = bytes(enc({ ...b, truncated: false })) <= limit;
        const expected = full ? { ...b, truncated: false } : longestThatFits(b, limit, enc);
        let encodes = 0;
        const counted = (p: Preview) => {
          encodes++;
          return enc(p);
        };
        expect(fitPreview(b, limit, counted)).toEqual(expected);
        expect(encodes).toBeLessThanOrEqual(most);
      }
    });
  }
});
