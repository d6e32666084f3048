/**
 * A call's headers as the `Headers` Connect's contract gives it, kept in plain records: the
 * request's, read in place from Node's object, and the response's headers and trailers.
 *
 * Copying a request's headers into a `Headers` validated and stored every name and value again
 * (Node's parsers, HTTP/1.1's and nghttp2's, have already refused what is not a header), and a
 * call reads five or six of them: the copy, the REST shim's two added headers and a publish's
 * reads took 1.6-2.7 µs in a loop, read in place 0.5-0.9 µs (BENCHMARKS.md, thirty-third
 * session). A response's two `Headers` (undici's: each name and value checked through WebIDL,
 * each set dropping the sorted list that every iteration builds again), with the publish's
 * three headers set and both written out, took 2.2-2.5 µs a call in a loop, these 1.3-1.4 µs
 * (BENCHMARKS.md, thirty-fifth session).
 *
 * `get` and `has` read the request's object (its names are lower case already) under what was
 * set since. Setting, appending or deleting a header name other than `set-cookie`, with a value
 * that `Headers` keeps as it is but for surrounding whitespace, writes to a record of this call's
 * own; iterating sorts the names, as `Headers` does. Anything else (`set-cookie`, a name or a
 * value `Headers` refuses or must convert, `getSetCookie`) first copies everything into the
 * `Headers` itself, and from then on it is an ordinary one, which answers or refuses as before.
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
/** A value `Headers` stores as it is but for surrounding whitespace: no control byte, no code point past U+00FF. */
const plainValue = /^[\t\x20-\x7e\x80-\xff]*$/;

/** What a header's value is, as `Headers` would store it (HTTP whitespace trimmed). */
function headerValue(v: string | string[]): string {
  const s = Array.isArray(v) ? v.join(", ") : v;
  const first = s.charCodeAt(0);
  const last = s.charCodeAt(s.length - 1);
  return first <= 32 || last <= 32 ? s.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "") : s;
}

const empty: RawHeaders = Object.freeze({});

export class CallHeaders extends HeadersClass {
  /** Node's headers, read and never changed; undefined once copied into `Headers`. */
  #raw: RawHeaders | undefined;
  readonly #dropped: ReadonlySet<string> | undefined;
  /**
   * Set since, over `#raw`: each lower-case name's value as its parts (a set and what was
   * appended, each as `Headers` stored it), which `Headers` joins with ", "; a name deleted
   * since has `undefined`. A map: `__proto__` is a header name like any other.
   */
  readonly #own = new Map<string, string[] | undefined>();

  /**
   * `raw` less its pseudo-headers (`:path`) and `dropped`, with `set` set over it. `raw` is read,
   * never changed, and must not change while this reads it. `set` is Herald's or Connect's own
   * (a response's first headers, as `Grpc-Status`): header names, with their values as stored.
   */
  constructor(
    raw: RawHeaders = empty,
    dropped?: ReadonlySet<string>,
    set?: Record<string, string>,
  ) {
    super();
    this.#raw = raw;
    this.#dropped = dropped;
    for (const k in set) this.#own.set(k.toLowerCase(), [set[k] as string]);
  }

  /** The value of a lower-case name, while read in place. */
  #read(n: string): string | undefined {
    if (this.#own.has(n)) {
      const parts = this.#own.get(n);
      return parts && (parts.length === 1 ? parts[0] : parts.join(", "));
    }
    const raw = this.#raw as RawHeaders;
    if (this.#dropped?.has(n) || !Object.hasOwn(raw, n)) return undefined;
    const v = raw[n];
    return v === undefined ? undefined : headerValue(v);
  }

  /** The lower-case name to read or write in place, or undefined: `Headers` must do it. */
  #inPlace(name: string, writing: boolean): string | undefined {
    if (this.#raw === undefined || !token.test(name)) return undefined;
    const n = name.toLowerCase();
    return writing && n === "set-cookie" ? undefined : n;
  }

  /** The name and the value as `Headers` would store them, to write in place; or undefined. */
  #writable(name: string, value: string): [string, string] | undefined {
    const n = this.#inPlace(name, true);
    if (n === undefined || typeof value !== "string" || !plainValue.test(value)) return undefined;
    return [n, headerValue(value)];
  }

  /** Copies everything in; from then on this is an ordinary `Headers`. */
  #copyIn(): void {
    const raw = this.#raw;
    if (raw === undefined) return;
    this.#raw = undefined;
    for (const [k, v] of Object.entries(raw)) {
      if (v === undefined || k.startsWith(":") || this.#dropped?.has(k)) continue;
      if (!this.#own.has(k)) super.set(k, headerValue(v));
    }
    for (const [k, parts] of this.#own) {
      // Appended as they were, so that a part `Headers` did not trim ("a, " after "") stays.
      for (const [i, v] of (parts ?? []).entries()) {
        if (i === 0) super.set(k, v);
        else super.append(k, v);
      }
    }
  }

  /** The names that may have a value, sorted as `Headers` iterates them. */
  #names(): string[] {
    const names = [...this.#own.keys()];
    const raw = this.#raw as RawHeaders;
    if (raw === empty) return names.sort();
    const all = new Set(names);
    for (const k of Object.keys(raw)) if (!k.startsWith(":")) all.add(k);
    return [...all].sort();
  }

  /** The names and values, sorted by name. */
  #sorted(): [string, string][] {
    const out: [string, string][] = [];
    for (const k of this.#names()) {
      const v = this.#read(k);
      if (v !== undefined) out.push([k, v]);
    }
    return out;
  }

  /** Iterating in place, but for a `set-cookie` of the request's (`Headers` lists each apart). */
  #iterable(): boolean {
    if (this.#raw !== undefined && this.#read("set-cookie") !== undefined) this.#copyIn();
    return this.#raw !== undefined;
  }

  // A name that is no header name goes to `Headers`, which refuses it (a TypeError) as before.
  override get(name: string): string | null {
    const n = this.#inPlace(name, false);
    return n === undefined ? super.get(name) : (this.#read(n) ?? null);
  }

  override has(name: string): boolean {
    const n = this.#inPlace(name, false);
    return n === undefined ? super.has(name) : this.#read(n) !== undefined;
  }

  override set(name: string, value: string): void {
    const w = this.#writable(name, value);
    if (w) {
      this.#own.set(w[0], [w[1]]);
      return;
    }
    this.#copyIn();
    super.set(name, value);
  }

  override append(name: string, value: string): void {
    const w = this.#writable(name, value);
    if (w) {
      const [n, v] = w;
      // The parts so far: those set since (none once deleted), else the request's own value.
      let was = this.#own.get(n);
      if (!this.#own.has(n)) was = [this.#read(n)].filter((r) => r !== undefined);
      this.#own.set(n, [...(was ?? []), v]);
      return;
    }
    this.#copyIn();
    super.append(name, value);
  }

  override delete(name: string): void {
    const n = this.#inPlace(name, true);
    if (n !== undefined) {
      this.#own.set(n, undefined);
      return;
    }
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
    if (!this.#iterable()) {
      super.forEach(callback, thisArg);
      return;
    }
    for (const k of this.#names()) {
      const v = this.#read(k);
      if (v !== undefined) callback.call(thisArg, v, k, this as unknown as Headers);
    }
  }

  override entries(): Iter<"entries"> {
    if (!this.#iterable()) return super.entries();
    return this.#sorted()[Symbol.iterator]() as unknown as Iter<"entries">;
  }

  override keys(): Iter<"keys"> {
    if (!this.#iterable()) return super.keys();
    return this.#sorted()
      .map(([k]) => k)
      [Symbol.iterator]() as unknown as Iter<"keys">;
  }

  override values(): Iter<"values"> {
    if (!this.#iterable()) return super.values();
    return this.#sorted()
      .map(([, v]) => v)
      [Symbol.iterator]() as unknown as Iter<"values">;
  }

  override [Symbol.iterator](): Iter<"entries"> {
    return this.entries();
  }
}
