/** The URLs Herald prints for people: its base, and the owner's setup link. */
import type { Config } from "../config.ts";

/** HERALD_PUBLIC_URL, or the address it listens on (a port of 0 is given after listening). */
export function baseUrlOf(config: Pick<Config, "publicUrl" | "host" | "port">, port = config.port) {
  if (config.publicUrl) return config.publicUrl.replace(/\/$/, "");
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The token rides in the fragment: never sent to a server, never in a log or a Referer. */
export function setupUrl(base: string, token: string): string {
  return `${base}/setup#${token}`;
}
