/**
 * A call's headers kept in plain records (server/call-headers.ts): a request's, read in place,
 * show what a `Headers` copied from the request would, and a response's headers and trailers
 * answer every change and question as a `Headers` does, refusals included.
 */
import { describe, expect, it } from "vitest";
import { CallHeaders } from "../../../src/server/call-headers.ts";
import { webHeaders } from "../../../src/server/context.ts";
import { seededRandom } from "../../helpers/random.ts";

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

/** What a `Headers` shows of itself: every entry, as each way of iterating gives them. */
function shown(h: Headers) {
  const each: string[] = [];
  h.forEach((v, k, parent) => {
    each.push(`${k}=${v}${parent === h ? "" : " (another parent)"}`);
  });
  return {
    entries: [...h],
    each,
    keys: [...h.keys()],
    values: [...h.values()],
    setCookie: h.getSetCookie(),
  };
}

/** An operation's outcome: its answer, or the class of what it threw. */
function outcome(f: () => unknown): unknown {
  try {
    return { answer: f() };
  } catch (e) {
    return { threw: (e as Error).constructor.name };
  }
}

const opNames = [
  "content-type",
  "grpc-status",
  "Grpc-Status",
  "Request-ID",
  "request-id",
  "ratelimit",
  "set-cookie",
  "Set-Cookie",
  "x-forwarded-for",
  "host",
  "bad name",
  "",
  "__proto__",
  "constructor",
  ":path",
];
const opValues = [
  "v",
  " padded\t",
  "a, b",
  "",
  "café",
  "\x7f",
  "line\nbreak",
  "nul\0",
  "Ā wide",
  "\ttabbed value ",
];

describe("a call's headers, changed as Headers change", () => {
  // Connect names a response's first headers as it writes them (`Grpc-Status`).
  const first = { "Content-Type": "application/grpc+proto" };
  const status = { "Grpc-Status": "0" };
  const makers: [string, () => Headers, () => Headers][] = [
    [
      "a response's headers",
      () => new CallHeaders(undefined, undefined, first),
      () => new Headers(first),
    ],
    [
      "a response's trailers",
      () => new CallHeaders(undefined, undefined, status),
      () => new Headers(status),
    ],
    ["a response's trailers, empty at first", () => new CallHeaders(), () => new Headers()],
    [
      "a request's headers",
      () => webHeaders(raw, new Set(["host"]), { "x-set": "1" }),
      () => copied(new Set(["host"]), { "x-set": "1" }),
    ],
  ];
  for (const [what, make, reference] of makers) {
    it(`answers every step as Headers does: ${what}`, () => {
      const next = seededRandom(24);
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)] as T;
      for (let round = 0; round < 1000; round++) {
        const [h, ref] = [make(), reference()];
        for (let step = 0; step < 10; step++) {
          const op = pick(["set", "append", "delete", "get", "has", "iterate"] as const);
          const [name, value] = [pick(opNames), pick(opValues)];
          const apply = (x: Headers) => () =>
            op === "set"
              ? x.set(name, value)
              : op === "append"
                ? x.append(name, value)
                : op === "delete"
                  ? x.delete(name)
                  : op === "get"
                    ? x.get(name)
                    : op === "has"
                      ? x.has(name)
                      : [...x];
          expect([round, step, op, name, value, outcome(apply(h))]).toEqual([
            round,
            step,
            op,
            name,
            value,
            outcome(apply(ref)),
          ]);
        }
        expect(shown(h)).toEqual(shown(ref));
        for (const n of opNames) expect(outcome(() => h.get(n))).toEqual(outcome(() => ref.get(n)));
        expect([...new Headers(h)]).toEqual([...new Headers([...ref])]);
      }
    });
  }

  it("keeps a response's changes in its own records, and becomes a plain Headers for a cookie", () => {
    const h = new CallHeaders(undefined, undefined, first);
    h.set("Request-Id", " r1 ");
    h.append("ratelimit", '"credential";r=9;t=1');
    h.append("ratelimit", "again");
    expect([...h]).toEqual([
      ["content-type", "application/grpc+proto"],
      ["ratelimit", '"credential";r=9;t=1, again'],
      ["request-id", "r1"],
    ]);
    h.append("set-cookie", "a=1");
    h.append("set-cookie", "b=2");
    expect(h.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect([...h].filter(([k]) => k === "set-cookie")).toEqual([
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect(h.get("request-id")).toBe("r1");
  });

  it("keeps an appended value's parts exactly when it becomes a plain Headers", () => {
    const [h, ref] = [new CallHeaders(), new Headers()];
    for (const x of [h, ref]) {
      x.append("x-list", "a");
      x.append("x-list", "");
      x.append("x-list", "b");
      x.set("set-cookie", "c=1");
    }
    expect(h.get("x-list")).toBe("a, , b");
    expect([...h]).toEqual([...ref]);
  });
});
