/**
 * Web Push's VAPID subject (RFC 8292's `sub`): a contact for the push services, a `mailto:`
 * address or an `https:` URL. Apple's push service refuses one that is neither, and one on a
 * host nobody can reach (`mailto:owner@localhost`, `https://localhost`), with 403 BadJwtToken
 * for every push to Safari and to iPhone web apps, where Google's and Mozilla's take it.
 */
import { isIP } from "node:net";
import { isPublicAddress } from "./public-url.ts";

/** Names no one outside this machine or network resolves (RFC 2606, 6761, 6762, 8375). */
const reservedSuffixes = [
  ".localhost",
  ".local",
  ".internal",
  ".invalid",
  ".test",
  ".example",
  ".home.arpa",
  ".lan",
];

/** The subject's host: a `mailto:`'s domain, an `https:` URL's host; undefined when neither. */
export function subjectHost(subject: string): string | undefined {
  if (subject.startsWith("mailto:")) {
    const m = /^mailto:[^@\s]+@([^@\s?]+)$/.exec(subject);
    return m?.[1];
  }
  try {
    const url = new URL(subject);
    return url.protocol === "https:" && url.hostname !== "" ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a host is one no push service can reach: a reserved or single-label name, a private address. */
export function unreachableHost(host: string): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (isIP(h)) return !isPublicAddress(h);
  return !h.includes(".") || reservedSuffixes.some((s) => h.endsWith(s));
}

/** Whether Apple's push service would refuse the subject (it says 403 BadJwtToken). */
export function refusedSubject(subject: string): boolean {
  const host = subjectHost(subject);
  return host === undefined || unreachableHost(host);
}
