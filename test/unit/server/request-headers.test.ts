/**
 * A request's headers read in place (server/request-headers.ts): what a call sees is what a
 * `Headers` copied from the request would show, before and after anything changes or copies it.
 */
import { describe, expect, it } from "vitest";
import { webHeaders } from "../../../src/server/context.ts";

const raw = {
  ":path": "/herald.v1.NotifyService/Notify",
  host: "herald.example",
  authorization: "Bearer hk_secret",
  "content-type": "application/grpc",
  "x-forwarded-for": ["198.51.100.7", "203.0.113.9"],
  "x-padded": "  spaced\t",
  "x-gone": undefined,
};

/** The same headers as the copy the call used to get: the reference to compare with. */
function copied(dropped?: Set<string>, extra: Record<string, string> = {}): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined || k.startsWith(":") || dropped?.has(k)) continue;
    h.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  for (const [k, v] of Object.entries(extra)) h.set(k, v);
  return h;
}

const names = [
  ...Object.keys(raw).filter((n) => !n.startsWith(":")),
  "Authorization",
  "HOST",
  "cookie",
  "connect-protocol-version",
];

describe("a request's headers, read in place", () => {
  it("reads as the copy would, whatever the case of the name", () => {
    const dropped = new Set(["content-type"]);
    const extra = { "connect-protocol-version": "1", host: "set.example" };
    const inPlace = webHeaders(raw, dropped, extra);
    const copy = copied(dropped, extra);
    for (const n of names) {
      expect([n, inPlace.get(n)]).toEqual([n, copy.get(n)]);
      expect([n, inPlace.has(n)]).toEqual([n, copy.has(n)]);
    }
    expect(inPlace.get("x-forwarded-for")).toBe("198.51.100.7, 203.0.113.9");
    expect(inPlace.get("x-padded")).toBe("spaced");
    // Not a header name: refused as a copy refuses it, not read from the request.
    expect(() => inPlace.get(":path")).toThrow(TypeError);
    expect(() => copy.get(":path")).toThrow(TypeError);
  });

  it("iterates, copies and changes as the copy does", () => {
    const inPlace = webHeaders(raw);
    expect([...inPlace]).toEqual([...copied()]);
    expect([...new Headers(webHeaders(raw))]).toEqual([...copied()]);
    const seen: string[] = [];
    webHeaders(raw).forEach((v, k) => {
      seen.push(`${k}=${v}`);
    });
    expect(seen).toEqual([...copied()].map(([k, v]) => `${k}=${v}`));
    expect([...webHeaders(raw).keys()]).toEqual([...copied().keys()]);
    expect([...webHeaders(raw).values()]).toEqual([...copied().values()]);
  });

  it("keeps every header once something is set, appended or deleted, and never changes the request", () => {
    const before = structuredClone(raw);
    const h = webHeaders(raw);
    h.set("request-id", "r1");
    h.append("x-forwarded-for", "192.0.2.1");
    h.delete("host");
    const copy = copied();
    copy.set("request-id", "r1");
    copy.append("x-forwarded-for", "192.0.2.1");
    copy.delete("host");
    expect([...h]).toEqual([...copy]);
    expect(h.get("authorization")).toBe("Bearer hk_secret");
    expect(h.getSetCookie()).toEqual([]);
    expect(raw).toEqual(before);
  });
});
