import { describe, expect, it } from "vitest";
import {
  defaultPushHosts,
  hostAllowed,
  pushEndpointProblem,
} from "../../../src/domain/push-endpoint.ts";

describe("Web Push endpoints", () => {
  it("are held to the public push services' hosts by default", () => {
    for (const ok of [
      "https://fcm.googleapis.com/fcm/send/abc",
      "https://updates.push.services.mozilla.com/wpush/v2/abc",
      "https://web.push.apple.com/QO_abc",
      "https://wns2-par02p.notify.windows.com/w/?token=abc",
    ]) {
      expect(pushEndpointProblem(ok, defaultPushHosts, false), ok).toBeUndefined();
    }
    expect(pushEndpointProblem("https://evil.example.com/x", defaultPushHosts, false)).toMatch(
      /push service/,
    );
    expect(
      pushEndpointProblem("https://push.apple.com.evil.net/x", defaultPushHosts, false),
    ).toMatch(/push service/);
    expect(pushEndpointProblem("http://fcm.googleapis.com/x", defaultPushHosts, false)).toBe(
      "must be https",
    );
    expect(
      pushEndpointProblem("https://u:p@fcm.googleapis.com/x", defaultPushHosts, false),
    ).toMatch(/user information/);
  });
  it("refuse private addresses even when the operator allows the host, unless private ones are allowed", () => {
    const hosts = [...defaultPushHosts, "127.0.0.1", "[::1]", "10.0.0.7"];
    for (const bad of ["https://127.0.0.1:5432/", "https://[::1]:8443/x", "https://10.0.0.7/x"]) {
      expect(pushEndpointProblem(bad, hosts, false), bad).toMatch(
        /private, loopback or link-local/,
      );
      expect(pushEndpointProblem(bad, hosts, true), bad).toBeUndefined();
    }
  });
  it("match wildcards on subdomains only", () => {
    expect(hostAllowed("a.push.services.mozilla.com", ["*.push.services.mozilla.com"])).toBe(true);
    expect(hostAllowed("push.services.mozilla.com", ["*.push.services.mozilla.com"])).toBe(false);
    expect(hostAllowed("xpush.services.mozilla.com", ["*.push.services.mozilla.com"])).toBe(false);
  });
});
