/**
 * How each environment variable's text becomes a setting: the parsers loadConfig (config.ts,
 * the one reader of the environment) applies, each throwing with the variable's name when a
 * value is unusable.
 */
import { isIP } from "node:net";
import { availableParallelism, totalmem } from "node:os";
import type { Config } from "./config.ts";
import { vapidSubject } from "./config-push.ts";
import { type Limits, limitTable } from "./domain/limits.ts";

export type Env = Record<string, string | undefined>;

export function trustProxy(value: string | undefined): false | number | string {
  const v = value?.trim() ?? "";
  if (v === "") return false;
  if (/^\d+$/.test(v)) return Number(v);
  // Trusting every proxy would let any client choose its address (and escape its limits).
  const bad = v.split(",").find((entry) => !proxyEntry(entry.trim()));
  if (v === "true" || v === "*" || bad !== undefined) {
    const which =
      bad === undefined || v === "true" || v === "*" ? "" : ` ("${bad.trim()}" is none)`;
    throw new Error(
      `HERALD_TRUST_PROXY must name the proxies (addresses, CIDR ranges, loopback, linklocal, uniquelocal) or a hop count${which}`,
    );
  }
  return v;
}

/**
 * One proxy as Fastify's proxy-addr takes it: an address, a CIDR range (or address/netmask), or
 * a name of its ranges. Another stopped every serving process with "invalid IP address: yes",
 * after a first start had made its key.
 */
function proxyEntry(entry: string): boolean {
  if (["loopback", "linklocal", "uniquelocal"].includes(entry)) return true;
  const [address = "", range, ...rest] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (range === undefined) return true;
  if (/^\d+$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(range) === 4;
}

/** pino's levels (another one stopped the start with pino's stack). */
const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export function logSettings(env: Env): Pick<Config, "logLevel" | "logFormat"> {
  const level = (env.HERALD_LOG_LEVEL || "info").toLowerCase();
  if (!logLevels.includes(level)) {
    throw new Error(
      `HERALD_LOG_LEVEL must be ${logLevels.slice(0, -1).join(", ")} or silent, got ${JSON.stringify(env.HERALD_LOG_LEVEL)}`,
    );
  }
  return { logLevel: level, logFormat: logFormat(env.HERALD_LOG_FORMAT) };
}

export function logFormat(value: string | undefined): Config["logFormat"] {
  if (value === "json" || value === "pretty") return value;
  if (value)
    throw new Error(`HERALD_LOG_FORMAT must be json or pretty, got ${JSON.stringify(value)}`);
  return process.stdout.isTTY ? "pretty" : "json";
}

/** Words a switch is said with, and what each means. */
const switchWords: Record<string, boolean> = {
  "1": true,
  true: true,
  yes: true,
  on: true,
  "0": false,
  false: false,
  no: false,
  off: false,
};

/**
 * A switch: 1, true, yes or on; 0, false, no or off; `fallback` when unset. Another word
 * stops the start (HERALD_SIGNUP=true left sign-up closed without a word: only "1" opened it).
 */
export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "") return fallback;
  const value = switchWords[raw];
  if (value === undefined) {
    throw new Error(
      `${name} is 1 or 0 (true or false, yes or no, on or off), got ${JSON.stringify(env[name])}`,
    );
  }
  return value;
}

export function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export function limits(env: Env): Limits {
  const entries = Object.entries(limitTable).map(([name, l]) => [
    name,
    int(env, l.env, l.value, 1, 1_000_000_000),
  ]);
  return Object.fromEntries(entries) as Limits;
}

/**
 * Two commits under way per machine by default, shared among its processes (measured: more only
 * costs PostgreSQL CPU on a small machine; BENCHMARKS.md).
 */
export function groupCommitSlots(env: Env, processes: number): number {
  return int(env, "HERALD_GROUP_COMMIT_SLOTS", Math.max(1, Math.ceil(2 / processes)), 1, 64);
}

/** Serving processes: the cores but one, left to PostgreSQL (fastest on 2: BENCHMARKS.md). */
export function processCount(env: Env): number {
  return int(env, "HERALD_PROCESSES", Math.max(1, availableParallelism() - 1), 1, 256);
}

/** The memory this process may use: its control group's limit (a container's), else the machine's. */
export function machineMemoryBytes(): number {
  const limit = process.constrainedMemory();
  return limit > 0 && limit < totalmem() ? limit : totalmem();
}

/**
 * A serving process's old-generation limit (HERALD_PROCESS_HEAP_MB): 2048 MB, or less where
 * memory is short: 40 % of it shared by the serving processes (the rest is PostgreSQL's, the
 * supervisor's and the young generations'), at least 128 MB. V8 sizes its own default from a
 * container's limit; a fixed 2048 overrode that, so a 512 MB container let the heap grow past
 * its limit between full collections, and the kernel killed the process instead.
 */
export function processHeapMb(env: Env, processes: number, memoryBytes = machineMemoryBytes()) {
  const share = Math.floor((memoryBytes * 0.4) / processes / 2 ** 20);
  return int(env, "HERALD_PROCESS_HEAP_MB", Math.max(128, Math.min(2048, share)), 0, 65_536);
}

/**
 * Herald's listening ports: the API's, email in's and the metrics' (each only when set), each
 * a port of its own. The API and email listeners share theirs among the serving processes by
 * SO_REUSEPORT, so on one port the kernel would hand half of one's connections to the other.
 */
export function listeningPorts(env: Env) {
  const port = int(env, "HERALD_PORT", 8080, 0, 65535);
  const optional = (name: string) => (env[name] ? int(env, name, 0, 0, 65535) : undefined);
  const smtpPort = optional("HERALD_SMTP_PORT");
  const metricsPort = optional("HERALD_METRICS_PORT");
  const named: [string, number | undefined][] = [
    ["HERALD_PORT", port],
    ["HERALD_SMTP_PORT", smtpPort],
    ["HERALD_METRICS_PORT", metricsPort],
  ];
  for (const [i, [first, p]] of named.entries()) {
    for (const [second, q] of named.slice(i + 1)) {
      if (p && p === q) {
        throw new Error(`${second} is ${first}'s port (${p}): each listener needs one of its own`);
      }
    }
  }
  return { port, smtpPort, metricsPort };
}

/** Email in: off unless HERALD_SMTP_PORT is set (`port`); STARTTLS with a key and a certificate. */
export function smtp(env: Env, port: number | undefined): Config["smtp"] {
  if (port === undefined) return undefined;
  const [keyFile, certFile] = [env.HERALD_SMTP_TLS_KEY, env.HERALD_SMTP_TLS_CERT];
  if (!keyFile !== !certFile) {
    throw new Error("HERALD_SMTP_TLS_KEY and HERALD_SMTP_TLS_CERT are set together, or neither");
  }
  const tls = keyFile && certFile ? { keyFile, certFile } : undefined;
  const domain = env.HERALD_SMTP_DOMAIN || undefined;
  // The part of each hook's address after the @: a scheme or a port there made addresses no
  // mail server could send to.
  if (domain !== undefined && !/^[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(domain)) {
    throw new Error(
      `HERALD_SMTP_DOMAIN is "${domain}", not a domain: the name after the @ of the hooks' addresses, as hooks.example.com`,
    );
  }
  return { port, tls, domain };
}

/**
 * HERALD_PUBLIC_URL: the URL people reach Herald at, whole (`https://herald.example.com`).
 * Without a scheme it printed links that went nowhere, and a console sign-in failed on it.
 */
export function publicUrl(env: Env): string | undefined {
  const value = env.HERALD_PUBLIC_URL;
  if (!value) return undefined;
  const example = "as https://herald.example.com";
  const url = URL.parse(value);
  if (!url) {
    throw new Error(
      `HERALD_PUBLIC_URL is "${value}", which is not a URL: give it whole, ${example}`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(
      `HERALD_PUBLIC_URL is "${value}": it starts with https:// or http://, ${example}`,
    );
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new Error(
      `HERALD_PUBLIC_URL is "${value}": a query, a fragment or a user name has no place in it`,
    );
  }
  return value;
}

/** The URL people reach Herald at, and Web Push's contact, derived from it unless set. */
export function publicAddress(env: Env) {
  const url = publicUrl(env);
  return { publicUrl: url, vapidSubject: vapidSubject(env, url) };
}

/** HTML's valid e-mail address: what the console's sign-in field and sign-up's check accept. */
const emailAddress =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/**
 * HERALD_OWNER_EMAIL, the owner's sign-in: an email address, as the console's sign-in field
 * asks (`admin` made an owner no browser would sign in).
 */
export function ownerEmail(env: Env): string {
  const email = env.HERALD_OWNER_EMAIL || "owner@localhost";
  if (email.length > 254 || !emailAddress.test(email)) {
    throw new Error(
      `HERALD_OWNER_EMAIL is "${email}", not an email address: the console signs the owner in by one, as owner@example.com`,
    );
  }
  return email;
}

/**
 * DATABASE_URL, a PostgreSQL connection URL naming its database, or undefined (the embedded
 * one). Its text is never said back: it holds the password. `foo` stopped the start with
 * MikroORM's "`clientUrl` option provided but it's missing the pathname".
 */
export function databaseUrl(env: Env): string | undefined {
  const raw = env.DATABASE_URL;
  if (!raw) return undefined;
  const shape = "postgres://user:password@host:5432/database";
  const url = URL.parse(raw);
  if (!url) throw new Error(`DATABASE_URL is not a URL: give it as ${shape}`);
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new Error(`DATABASE_URL is a ${url.protocol} URL: give it as ${shape}`);
  }
  if (decodeURIComponent(url.pathname.replace(/^\//, "")) === "") {
    throw new Error(`DATABASE_URL names no database: give it as ${shape}`);
  }
  return raw;
}
