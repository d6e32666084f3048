/**
 * The publish rules protovalidate cannot express (src/domain/notify-rules.ts): each field named
 * with its message, every bad field reported at once, and the clearer wording of list rules.
 */
import { describe, expect, it } from "vitest";
import {
  domainRules,
  explainViolation,
  idempotencyKeyViolation,
  limits,
  notifyViolations,
} from "../../../src/domain/notify-rules.ts";

const now = new Date("2026-11-24T12:00:00Z");
const fields = (req: Parameters<typeof notifyViolations>[0]) =>
  notifyViolations(req, now).map((v) => v.field);

describe("notifyViolations", () => {
  it("takes a plain publish, and a title the proto already refused as empty is not doubled", () => {
    expect(notifyViolations({ title: "deploy finished" }, now)).toEqual([]);
    expect(notifyViolations({ title: "" }, now)).toEqual([]);
  });

  it("refuses a blank title and a blank action label, naming each", () => {
    expect(notifyViolations({ title: "  \t" }, now)).toEqual([
      { field: "title", message: "must not be blank" },
    ]);
    expect(fields({ title: "ok", actions: [{ label: "Yes" }, { label: " " }] })).toEqual([
      "actions[1].label",
    ]);
  });

  it("refuses a click_url that is not public http(s), and takes one that is", () => {
    expect(fields({ title: "t", clickUrl: "https://ci.example.com/run/1" })).toEqual([]);
    for (const url of ["ftp://example.com/", "http://127.0.0.1/", "https://u:p@example.com/"]) {
      expect(fields({ title: "t", clickUrl: url })).toEqual(["click_url"]);
    }
  });

  it("counts metadata on its compact UTF-8 JSON, at the limit and one byte over", () => {
    // {"k":"…"} is 8 bytes around the value.
    const at = { k: "x".repeat(limits.metadataBytes - 8) };
    expect(fields({ title: "t", metadata: at })).toEqual([]);
    const over = { k: "é".repeat((limits.metadataBytes - 8) / 2 + 1) };
    const [v] = notifyViolations({ title: "t", metadata: over }, now);
    expect(v).toEqual({
      field: "metadata",
      message: `must be at most ${limits.metadataBytes} bytes of compact JSON, got ${limits.metadataBytes + 2}`,
    });
  });

  it("reports every bad field at once: schedule, acknowledgement, url", () => {
    expect(
      fields({
        title: " ",
        deliverAt: "2026-11-23T00:00:00Z",
        repeatEverySeconds: 60,
        clickUrl: "javascript:alert(1)",
      }).sort(),
    ).toEqual(["click_url", "deliver_at", "repeat_every_seconds", "title"]);
  });
});

describe("the Idempotency-Key header", () => {
  it("takes 1..255 printable ASCII characters and names the header otherwise", () => {
    expect(idempotencyKeyViolation("deploy-42")).toBeUndefined();
    expect(idempotencyKeyViolation("k".repeat(255))).toBeUndefined();
    for (const bad of ["", "k".repeat(256), "naïve", "tab\there"]) {
      expect(idempotencyKeyViolation(bad)?.field).toBe("Idempotency-Key");
    }
  });

  it("is checked by Notify's domain rule with the body's rules", () => {
    const rule = domainRules["herald.v1.NotifyService/Notify"];
    const out = rule?.({ title: " " }, new Headers({ "idempotency-key": "" }));
    expect(out?.map((v) => v.field)).toEqual(["title", "Idempotency-Key"]);
    expect(rule?.({ title: "ok" }, new Headers())).toEqual([]);
  });
});

describe("explainViolation", () => {
  const listMessage = "must be in list [, low, normal, high]";

  it("names a list rule's values, and suggests a priority for a synonym", () => {
    expect(explainViolation("priority", "string.in", listMessage, { priority: "bogus" })).toBe(
      "must be one of low, normal, high",
    );
    expect(explainViolation("priority", "string.in", listMessage, { priority: "URGENT" })).toBe(
      'must be one of low, normal, high (for "URGENT", use high)',
    );
  });

  it("leaves other rules' messages as they are", () => {
    expect(explainViolation("title", "string.max_len", "too long", {})).toBe("too long");
  });
});
