/**
 * Name resolution for connections to push services: only public addresses, unless the operator
 * allows private ones (tests, an in-house push service). Used when a device registers an
 * endpoint and, as the HTTPS agent's `lookup`, at every connection: a name that resolved to a
 * public address at registration and to 127.0.0.1 later (DNS rebinding) gets no connection.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { isPublicAddress } from "../../domain/public-url.ts";
import { heraldError } from "../../errors.ts";

/** Answers of the resolver that mean the name does not exist (the caller's mistake). */
const noSuchName = new Set(["ENOTFOUND", "ENODATA", "EAI_NONAME", "EAI_NODATA"]);

export type Lookup = (
  host: string,
  callback: (err: NodeJS.ErrnoException | null, found: LookupAddress[]) => void,
) => void;

const systemLookup: Lookup = (host, callback) => dnsLookup(host, { all: true }, callback);

/**
 * Why the host's addresses are refused, or undefined when they are all public. An address
 * literal (`[2001:db8::1]` as URL.hostname writes it) is checked as it is. A resolver that
 * cannot answer (a timeout, SERVFAIL, no DNS server) is the server's outage, not the caller's
 * mistake: 503 with Retry-After, so the caller tries again.
 */
export async function privateAddressProblem(
  host: string,
  lookup: Lookup = systemLookup,
): Promise<string | undefined> {
  const name = host.replace(/^\[|\]$/g, "");
  const addresses = isIP(name)
    ? [{ address: name, family: isIP(name) }]
    : await new Promise<LookupAddress[]>((resolve, reject) =>
        lookup(name, (err, found) => {
          if (!err) return resolve(found);
          if (noSuchName.has(err.code ?? "")) return resolve([]);
          reject(
            heraldError(
              "unavailable",
              `the server cannot resolve ${name} right now (${err.code ?? err.message}); try again`,
              { retryAfterSeconds: 5, metadata: { "retry-after": "5" } },
            ),
          );
        }),
      );
  if (addresses.length === 0) return "does not resolve";
  return addresses.every((a) => isPublicAddress(a.address))
    ? undefined
    : "resolves to a private, loopback or link-local address";
}

/** A `lookup` for an HTTPS agent that answers public addresses only. */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, found) => {
    if (err) return callback(err, "", 0);
    const addresses = (found as unknown as LookupAddress[]).filter((a) =>
      isPublicAddress(a.address),
    );
    if (addresses.length === 0) {
      const refused = Object.assign(new Error(`${hostname} resolves to no public address`), {
        code: "EPRIVATEADDRESS",
      });
      return callback(refused, "", 0);
    }
    if (options.all)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};
