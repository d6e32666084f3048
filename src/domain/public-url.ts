/**
 * Is a click_url safe to hand to a device? docs/api.md: an absolute http(s) URL, no user-info,
 * and a public host. The URL is parsed by WHATWG rules, the same ones browsers apply, so that
 * tricks like `http://2130706433/` or `http://0x7f.1/` are seen as the 127.0.0.1 they are.
 */
import { BlockList, isIPv4 } from "node:net";

const nonPublicV4 = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // unspecified / "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private
  ["192.168.0.0", 16], // private
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
] as const) {
  nonPublicV4.addSubnet(net, prefix, "ipv4");
}

const nonPublicV6 = new BlockList();
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated, still private)
  ["ff00::", 8], // multicast
] as const) {
  nonPublicV6.addSubnet(net, prefix, "ipv6");
}

const blockedSuffixes = [".localhost", ".local", ".internal"];

/** IPv6 forms that embed an IPv4 address in their last 32 bits. */
const embeddedV4Prefixes = [
  /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // IPv4-mapped
  /^::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // IPv4-compatible (deprecated)
  /^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/, // NAT64
];

function embeddedV4(v6: string): string | undefined {
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
  if (isIPv4(a)) return !nonPublicV4.check(a, "ipv4");
  const v4 = embeddedV4(a);
  return v4 !== undefined ? !nonPublicV4.check(v4, "ipv4") : !nonPublicV6.check(a, "ipv6");
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
    if (v4 !== undefined ? nonPublicV4.check(v4, "ipv4") : nonPublicV6.check(v6, "ipv6")) {
      return "must point to a public host, not a private or special-purpose address";
    }
    return undefined;
  }
  if (isIPv4(host)) {
    return nonPublicV4.check(host, "ipv4")
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
