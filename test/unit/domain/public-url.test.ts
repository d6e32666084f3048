import { describe, expect, it } from "vitest";
import { refusePublicUrl } from "../../../src/domain/public-url.ts";

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
