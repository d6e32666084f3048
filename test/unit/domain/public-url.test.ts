import { describe, expect, it } from "vitest";
import { isPublicAddress, refusePublicUrl } from "../../../src/domain/public-url.ts";

describe("refusePublicUrl", () => {
  it("accepts absolute http(s) URLs on public hosts", () => {
    for (const ok of [
      "https://ci.example.com/builds/1?x=y#z",
      "http://example.org",
      "https://93.184.216.34/",
      "https://[2606:4700:4700::1111]/",
    ])
      expect(refusePublicUrl(ok), ok).toBeUndefined();
  });
  it("refuses other schemes, relative URLs and user information", () => {
    expect(refusePublicUrl("/relative")).toMatch(/absolute/);
    expect(refusePublicUrl("ftp://example.com/")).toMatch(/http or https/);
    expect(refusePublicUrl("javascript:alert(1)")).toMatch(/http or https/);
    expect(refusePublicUrl("https://user:pw@example.com/")).toMatch(/user information/);
  });
  it("refuses private, loopback, link-local and embedded private addresses", () => {
    for (const bad of [
      "http://127.0.0.1/",
      "http://10.1.2.3/",
      "http://192.168.0.1/",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/",
      "http://[fe80::1]/",
      "http://[::ffff:10.0.0.1]/",
      "http://0x7f000001/",
    ])
      expect(refusePublicUrl(bad), bad).toMatch(/public host/);
  });
  it("refuses local and single-label names", () => {
    expect(refusePublicUrl("http://localhost:8080/")).toMatch(/public host/);
    expect(refusePublicUrl("http://printer.local/")).toMatch(/public host/);
    expect(refusePublicUrl("http://intranet/")).toMatch(/fully qualified/);
  });
});

describe("isPublicAddress", () => {
  it("refuses every special-purpose range that is not globally reachable (IANA registries)", () => {
    for (const special of [
      "0.1.2.3",
      "100.64.0.1",
      "192.0.0.1",
      "192.0.0.170",
      "192.0.2.10",
      "192.88.99.1",
      "198.18.0.1",
      "198.19.255.254",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.251",
      "255.255.255.255",
      "64:ff9b:1::1",
      "100::1",
      "2001::1",
      "2001:2::1",
      "2001:db8::1",
      "2002:c000:0204::1",
      "3fff::1",
      "5f00::1",
      "fd00::1",
      "ff02::1",
      "::ffff:198.51.100.1",
    ])
      expect(isPublicAddress(special), special).toBe(false);
  });
  it("lets through public addresses and the registries' globally reachable exceptions", () => {
    for (const reachable of [
      "93.184.216.34",
      "192.0.0.9",
      "192.0.0.10",
      "1.1.1.1",
      "2606:4700:4700::1111",
      "2001:1::1",
      "2001:3::5",
      "2001:4:112::1",
      "2001:20::1",
    ])
      expect(isPublicAddress(reachable), reachable).toBe(true);
  });
});
