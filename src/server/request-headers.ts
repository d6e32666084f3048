/**
 * A Node request's headers as the call's `Headers`, read in place. Copying them into a `Headers`
 * validated and stored every name and value again (Node's parsers, HTTP/1.1's and nghttp2's,
 * have already refused what is not a header), and a call reads five or six of them: the copy,
 * the REST shim's two added headers and a publish's reads took 1.6-2.7 µs in a loop, read in
 * place 0.5-0.9 µs (BENCHMARKS.md, thirty-third session).
 *
 * `get` and `has` read the request's own object (its names are lower case already). Anything
 * else (a change, an iteration, `getSetCookie`, a copy made with `new Headers(it)`) first copies
 * the headers into the `Headers` itself, as before, and from then on it is an ordinary one.
 * Iterating is overridden too: undici copies a plain `Headers` from its internal list, which
 * this one leaves empty until it is copied.
 */

type RawHeaders = Readonly<Record<string, string | string[] | undefined>>;
type Iter<K extends "entries" | "keys" | "values"> = ReturnType<Headers[K]>;

/**
 * `Headers` itself, typed with methods: undici's types declare its methods as properties, which
 * a subclass may not override.
 */
const HeadersClass = Headers as unknown as new () => {
  get(name: string): string | null;
  has(name: string): boolean;
  set(name: string, value: string): void;
  append(name: string, value: string): void;
  delete(name: string): void;
  getSetCookie(): string[];
  forEach(callback: (value: string, key: string, parent: Headers) => void, thisArg?: unknown): void;
  entries(): Iter<"entries">;
  keys(): Iter<"keys">;
  values(): Iter<"values">;
  [Symbol.iterator](): Iter<"entries">;
};

/** A header name (RFC 9110's token). */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** What a header's value is, as `Headers` would store it (HTTP whitespace trimmed). */
function headerValue(v: string | string[]): string {
  const s = Array.isArray(v) ? v.join(", ") : v;
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  return first <= 32 || last <= 32 ? s.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "") : s;
}

export class RequestHeaders extends HeadersClass {
  /** The request's headers while they are read in place; undefined once copied in. */
  #raw: RawHeaders | undefined;
  readonly #dropped: ReadonlySet<string> | undefined;
  readonly #extra: Readonly<Record<string, string>> | undefined;

  /**
   * `raw` less its pseudo-headers (`:path`) and `dropped`, with `extra` set over it.
   * `raw` is read, never changed, and must not change while this reads it.
   */
  constructor(raw: RawHeaders, dropped?: ReadonlySet<string>, extra?: Record<string, string>) {
    super();
    this.#raw = raw;
    this.#dropped = dropped;
    this.#extra = extra;
  }

  #own(name: string): string | undefined {
    const raw = this.#raw as RawHeaders;
    const n = name.toLowerCase();
    const set = this.#extra?.[n];
    if (set !== undefined) return set;
    if (this.#dropped?.has(n) || !Object.hasOwn(raw, n)) return undefined;
    const v = raw[n];
    return v === undefined ? undefined : headerValue(v);
  }

  /** Copies the request's headers in; from then on this is an ordinary `Headers`. */
  #copyIn(): void {
    const raw = this.#raw;
    if (raw === undefined) return;
    this.#raw = undefined;
    for (const [k, v] of Object.entries(raw)) {
      if (v === undefined || k.startsWith(":") || this.#dropped?.has(k)) continue;
      if (this.#extra?.[k] === undefined) super.set(k, headerValue(v));
    }
    for (const [k, v] of Object.entries(this.#extra ?? {})) super.set(k, v);
  }

  // A name that is no header name goes to `Headers`, which refuses it (a TypeError) as before.
  override get(name: string): string | null {
    if (this.#raw === undefined || !token.test(name)) return super.get(name);
    return this.#own(name) ?? null;
  }

  override has(name: string): boolean {
    if (this.#raw === undefined || !token.test(name)) return super.has(name);
    return this.#own(name) !== undefined;
  }

  override set(name: string, value: string): void {
    this.#copyIn();
    super.set(name, value);
  }

  override append(name: string, value: string): void {
    this.#copyIn();
    super.append(name, value);
  }

  override delete(name: string): void {
    this.#copyIn();
    super.delete(name);
  }

  override getSetCookie(): string[] {
    this.#copyIn();
    return super.getSetCookie();
  }

  override forEach(
    callback: (value: string, key: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    this.#copyIn();
    super.forEach(callback, thisArg);
  }

  override entries(): Iter<"entries"> {
    this.#copyIn();
    return super.entries();
  }

  override keys(): Iter<"keys"> {
    this.#copyIn();
    return super.keys();
  }

  override values(): Iter<"values"> {
    this.#copyIn();
    return super.values();
  }

  override [Symbol.iterator](): Iter<"entries"> {
    return this.entries();
  }
}
