/**
 * Name resolution for connections to push services: only public addresses, unless the operator
 * allows private ones (tests, an in-house push service). Used when a device registers an
 * endpoint and, as the HTTPS agent's `lookup`, at every connection: a name that resolved to a
 * public address at registration and to 127.0.0.1 later (DNS rebinding) gets no connection.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { isPublicAddress } from "../../domain/public-url.ts";

/** Why the host's addresses are refused, or undefined when they are all public. */
export async function privateAddressProblem(host: string): Promise<string | undefined> {
  const addresses = await new Promise<LookupAddress[] | undefined>((resolve) =>
    dnsLookup(host, { all: true }, (err, found) => resolve(err ? undefined : found)),
  );
  if (!addresses || addresses.length === 0) return "does not resolve";
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
