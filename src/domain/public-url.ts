/**
 * Is a link a notification opens safe to hand to a device? docs/api.md: an absolute http(s) URL, no user-info,
 * and a public host. The URL is parsed by WHATWG rules, the same ones browsers apply, so that
 * tricks like `http://2130706433/` or `http://0x7f.1/` are seen as the 127.0.0.1 they are.
 */
import { BlockList, isIPv4 } from "node:net";

/**
 * Addresses that are not globally reachable: every entry of IANA's IPv4 and IPv6 Special-Purpose
 * Address Registries whose "Globally Reachable" is False or N/A, with the registries' exceptions
 * (globally reachable blocks inside a larger special-purpose one) let through, plus multicast.
 */
const nonPublicV4 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network" (RFC 791)
  ["10.0.0.0", 8], // private-use (RFC 1918)
  ["100.64.0.0", 10], // shared address space, CGNAT (RFC 6598)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private-use
  ["192.0.0.0", 24], // IETF protocol assignments (RFC 6890), DS-Lite, NAT64 discovery
  ["192.0.2.0", 24], // documentation, TEST-NET-1
  ["192.88.99.0", 24], // deprecated 6to4 relay anycast (RFC 7526)
  ["192.168.0.0", 16], // private-use
  ["198.18.0.0", 15], // benchmarking (RFC 2544)
  ["198.51.100.0", 24], // documentation, TEST-NET-2
  ["203.0.113.0", 24], // documentation, TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 limited broadcast
] as const) {
  nonPublicV4.addSubnet(net, prefix, "ipv4");
}
/** Globally reachable exceptions inside 192.0.0.0/24: PCP and TURN anycast (RFC 7723, 8155). */
const publicV4 = new BlockList();
publicV4.addAddress("192.0.0.9", "ipv4");
publicV4.addAddress("192.0.0.10", "ipv4");

const nonPublicV6 = new BlockList();
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48], // local-use IPv4/IPv6 translation (RFC 8215)
  ["100::", 64], // discard-only (RFC 6666)
  ["2001::", 23], // IETF protocol assignments: Teredo, benchmarking, ORCHID (exceptions below)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["3fff::", 20], // documentation (RFC 9637)
  ["5f00::", 16], // segment routing SIDs (RFC 9602)
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local unicast
  ["fec0::", 10], // site-local (deprecated, still private)
  ["ff00::", 8], // multicast
] as const) {
  nonPublicV6.addSubnet(net, prefix, "ipv6");
}
/** Globally reachable blocks inside 2001::/23 (the registry's True entries). */
const publicV6 = new BlockList();
publicV6.addAddress("2001:1::1", "ipv6"); // PCP anycast
publicV6.addAddress("2001:1::2", "ipv6"); // TURN anycast
publicV6.addSubnet("2001:3::", 32, "ipv6"); // AMT
publicV6.addSubnet("2001:4:112::", 48, "ipv6"); // AS112-v6
publicV6.addSubnet("2001:20::", 28, "ipv6"); // ORCHIDv2
publicV6.addSubnet("2001:30::", 28, "ipv6"); // drone remote ID

const v4NotPublic = (a: string) => nonPublicV4.check(a, "ipv4") && !publicV4.check(a, "ipv4");
const v6NotPublic = (a: string) => nonPublicV6.check(a, "ipv6") && !publicV6.check(a, "ipv6");

const blockedSuffixes = [".localhost", ".local", ".internal"];

/** IPv6 forms that embed an IPv4 address in their last 32 bits. */
const embeddedV4Prefixes = [
  /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // IPv4-mapped
  /^::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // IPv4-compatible (deprecated)
  /^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // NAT64
];

function embeddedV4(v6: string): string | undefined {
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(v6);
  if (dotted) return dotted[1];
  for (const re of embeddedV4Prefixes) {
    const m = re.exec(v6);
    if (m) {
      const hi = Number.parseInt(m[1] as string, 16);
      const lo = Number.parseInt(m[2] as string, 16);
      return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
    }
  }
  return undefined;
}

/** Whether an address (IPv4 or IPv6, as DNS answers it) is public: not loopback, private, … */
export function isPublicAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, "");
  if (isIPv4(a)) return !v4NotPublic(a);
  const v4 = embeddedV4(a);
  return v4 !== undefined ? !v4NotPublic(v4) : !v6NotPublic(a);
}

/** Returns why the URL is refused, or undefined when it is acceptable. */
export function refusePublicUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute http or https URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return "must be an http or https URL";
  }
  const authority = raw.slice(raw.indexOf("//") + 2).split(/[/?#\\]/, 1)[0] ?? "";
  if (url.username !== "" || url.password !== "" || authority.includes("@")) {
    return "must not contain user information";
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[")) {
    const v6 = host.slice(1, -1);
    const v4 = embeddedV4(v6);
    if (v4 !== undefined ? v4NotPublic(v4) : v6NotPublic(v6)) {
      return "must point to a public host, not a private or special-purpose address";
    }
    return undefined;
  }
  if (isIPv4(host)) {
    return v4NotPublic(host)
      ? "must point to a public host, not a private or special-purpose address"
      : undefined;
  }
  if (host === "localhost" || blockedSuffixes.some((s) => host.endsWith(s))) {
    return "must point to a public host, not a local or internal name";
  }
  if (!host.includes(".")) {
    return "must point to a public host: a fully qualified domain name";
  }
  return undefined;
}
