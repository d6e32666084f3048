/** The console's and the CLI's list of webhook event types is the one the proto's rule admits. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { webhookEventTypes } from "../../../src/domain/webhook-events.ts";

describe("webhook event types", () => {
  it("are exactly those CreateWebhookEndpointRequest.event_types admits", () => {
    const proto = readFileSync(
      new URL("../../../proto/herald/v1/webhook_service.proto", import.meta.url),
      "utf8",
    );
    const rule = /repeated string event_types = 2 \[[\s\S]*?in: \[([\s\S]*?)\]/.exec(proto)?.[1];
    const admitted = [...(rule ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]);
    expect(admitted.length).toBeGreaterThan(0);
    expect([...webhookEventTypes]).toEqual(admitted);
  });
});
