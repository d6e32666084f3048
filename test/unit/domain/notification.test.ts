import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { NotifyRequestSchema } from "../../../gen/herald/v1/notify_service_pb.ts";
import {
  apiContentOf,
  camelCase,
  contentFields,
  contentOf,
  recordOf,
  shownFields,
  shownOf,
} from "../../../src/domain/notification.ts";

const now = new Date("2026-11-25T10:00:00Z");
const ack = { escalateProjectId: null, scale: 1 };

describe("the notification's record", () => {
  it("fills the defaults once: topic default, priority normal, nothing else invented", () => {
    const c = contentOf(create(NotifyRequestSchema, { title: "t" }));
    expect(c).toEqual({
      topic: "default",
      title: "t",
      message: "",
      priority: "normal",
      click_url: null,
      metadata: null,
      ttl_seconds: null,
      replace_key: null,
    });
    expect(Object.keys(c).sort()).toEqual([...contentFields].sort());
  });

  it("counts a ttl from the delivery time, and queues or schedules", () => {
    const r = recordOf(create(NotifyRequestSchema, { title: "t", ttlSeconds: 60 }), "p", now, ack);
    expect(r.status).toBe("queued");
    expect(r.expires_at?.toISOString()).toBe("2026-11-25T10:01:00.000Z");
    const later = recordOf(
      create(NotifyRequestSchema, { title: "t", ttlSeconds: 60, delaySeconds: 120 }),
      "p",
      now,
      ack,
    );
    expect(later.status).toBe("scheduled");
    expect(later.expires_at?.toISOString()).toBe("2026-11-25T10:03:00.000Z");
  });

  it("gives a sender the shown fields alone, and the API the content under its own names", () => {
    const r = recordOf(
      create(NotifyRequestSchema, {
        title: "Deploy finished",
        clickUrl: "https://ci.example.com/1",
        metadata: { b: 1, a: 2 },
      }),
      "p",
      now,
      ack,
    );
    expect(Object.keys(shownOf(r))).toEqual([...shownFields]);
    expect(shownOf(r).click_url).toBe("https://ci.example.com/1");
    expect(apiContentOf(r)).toEqual({
      topic: "default",
      title: "Deploy finished",
      message: "",
      priority: "normal",
      clickUrl: "https://ci.example.com/1",
      metadata: { b: 1, a: 2 },
    });
    expect(camelCase("escalate_after_seconds")).toBe("escalateAfterSeconds");
  });
});
