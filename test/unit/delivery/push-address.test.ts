import { describe, expect, it } from "vitest";
import { type Lookup, privateAddressProblem } from "../../../src/delivery/senders/push-address.ts";
import { publicError } from "../../../src/errors.ts";

const failing =
  (code: string): Lookup =>
  (_host, callback) =>
    callback(Object.assign(new Error(`getaddrinfo ${code}`), { code }), []);

describe("privateAddressProblem", () => {
  it("checks an IPv6 literal as it is, brackets and all, without asking DNS", async () => {
    const never: Lookup = () => {
      throw new Error("an address literal is not looked up");
    };
    expect(await privateAddressProblem("[2606:4700:4700::1111]", never)).toBeUndefined();
    expect(await privateAddressProblem("[fd00::1]", never)).toMatch(/private/);
    expect(await privateAddressProblem("93.184.216.34", never)).toBeUndefined();
  });

  it("says a name that does not exist does not resolve (the caller's mistake)", async () => {
    expect(await privateAddressProblem("nope.example", failing("ENOTFOUND"))).toBe(
      "does not resolve",
    );
  });

  it("answers the server's own DNS outage with 503 unavailable and Retry-After", async () => {
    for (const code of ["EAI_AGAIN", "ETIMEOUT", "ESERVFAIL", "ECONNREFUSED"]) {
      const err = await privateAddressProblem("hooks.example.com", failing(code)).catch((e) => e);
      const pub = publicError(err);
      expect(pub.code, code).toBe("unavailable");
      expect(pub.retryAfterSeconds).toBe(5);
      expect(pub.detail).toContain(code);
    }
  });
});
