/**
 * Which Web Push endpoints a device may register. Herald's worker connects to them, so an
 * endpoint is a way into the server's own network unless it is held to the browsers' push
 * services: by default Google's (FCM), Mozilla's autopush, Apple's and Microsoft's (WNS) hosts,
 * plus any the operator adds (HERALD_WEB_PUSH_HOSTS). The addresses such a host resolves to are
 * checked too (push-address.ts), at registration and again at every connection.
 */
import { isIPv4 } from "node:net";
import { isPublicAddress } from "./public-url.ts";

/** The public push services' hosts (`*.` matches any subdomain). */
export const defaultPushHosts = [
  "fcm.googleapis.com",
  "*.push.services.mozilla.com",
  "*.push.apple.com",
  "*.notify.windows.com",
];

/** Whether `host` is one of `allowed` (exact, or under a `*.` entry). */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return allowed.some((a) => {
    const entry = a.toLowerCase().replace(/^\[|\]$/g, "");
    return entry.startsWith("*.")
      ? h.endsWith(entry.slice(1)) && h.length > entry.length - 1
      : h === entry;
  });
}

/**
 * Why a push endpoint is refused, or undefined: https, no user-info, an allowed host, and, when
 * the host is an address, a public one unless `allowPrivate` (tests, an in-house push service).
 */
export function pushEndpointProblem(
  endpoint: string,
  allowed: readonly string[],
  allowPrivate: boolean,
): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return "must be an absolute https URL";
  }
  if (url.protocol !== "https:") return "must be https";
  if (url.username !== "" || url.password !== "") return "must not contain user information";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (!hostAllowed(host, allowed)) {
    return "must be a push service's endpoint (FCM, Mozilla, Apple, Windows, or one the operator allows)";
  }
  const literal = isIPv4(host) || host.includes(":");
  if (literal && !allowPrivate && !isPublicAddress(host)) {
    return "must not point to a private, loopback or link-local address";
  }
  return undefined;
}
