/**
 * The streams' news of a clear, a repeat or a test notification goes out with the statement that
 * records it (db/notifications/inbox-news.ts, db/deliveries/enqueue-direct.ts): the persistence wing alone, with no stream hub and no
 * service after it, tells every process LISTENing when its transaction commits. Before, the hub
 * sent the news after the commit on its own connection, so a process killed in between, or one
 * whose LISTEN connection was away, left other devices' streams showing what a person had
 * acknowledged; and a NOTIFY failing after the commit answered an acknowledgement 503 that was
 * recorded, whose retry then told nobody.
 */
import { create } from "@bufbuild/protobuf";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import { createDeliveryQueue } from "../../src/db/deliveries/queue.ts";
import type { InboxNews } from "../../src/db/index.ts";
import { NotificationRepository } from "../../src/db/repositories/notifications.ts";
import { recordOf } from "../../src/domain/notification.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let listener: pg.Client;
const heard: InboxNews[] = [];
beforeAll(async () => {
  // Repeats every 0.6 s (30 s scaled), by the server's own worker.
  server = await startServer({ ackIntervalScale: 0.02 });
  listener = new pg.Client({ connectionString: server.databaseUrl });
  await listener.connect();
  listener.on("notification", (m) => heard.push(JSON.parse(m.payload ?? "null") as InboxNews));
  await listener.query("listen herald_inbox");
});
afterAll(async () => {
  await listener.end();
  await server.close();
});

const actions = [
  { id: "yes", label: "Deploy" },
  { id: "no", label: "Cancel" },
];

async function published(fields: Record<string, unknown>): Promise<string> {
  const res = await notify(server, { title: "db down", ...fields });
  expect(res.status, res.text).toBe(202);
  return res.json.id as string;
}

const clears = () => heard.filter((n) => n.kind === "cleared");

describe("the streams' news", () => {
  it("is sent by the statement that acknowledges, answers or withdraws, once, when it commits", async () => {
    const queue = createDeliveryQueue(server.orm, 30);
    const phone = await signInStreamDevice(server.url, "phone");
    const acked = await published({ require_ack: true, repeat_every_seconds: 3600 });
    const answered = await published({ actions });
    const withdrawn = await published({ actions });

    expect(await queue.acknowledge(acked, phone.id)).toBe(true);
    // Recorded before: no second acknowledgement, and no second news.
    expect(await queue.acknowledge(acked, phone.id)).toBe(false);
    expect(await queue.respond(answered, phone.id, { actionId: "yes", text: "" })).not.toBeNull();
    expect(await queue.cancel(server.projectId, withdrawn)).toBe("question_closed");

    await waitFor(() => clears().length >= 3);
    expect(clears()).toEqual([
      { kind: "cleared", id: acked, by: phone.id },
      { kind: "cleared", id: answered, by: phone.id },
      { kind: "cleared", id: withdrawn, by: "" },
    ]);
  });

  it("of a notification to one device (the owner's test) is sent by its transaction", async () => {
    const delivered = new pg.Client({ connectionString: server.databaseUrl });
    await delivered.connect();
    const ids: string[][] = [];
    delivered.on("notification", (m) => ids.push(JSON.parse(m.payload ?? "[]") as string[]));
    await delivered.query("listen herald_delivery");
    try {
      const phone = await signInStreamDevice(server.url, "tested");
      const record = recordOf(
        create(NotifyRequestSchema, { title: "Herald test notification" }),
        server.projectId,
        new Date(),
        { escalateProjectId: null, scale: 1 },
      );
      await new NotificationRepository(server.orm).enqueueDirect(record, {
        id: phone.id,
        platform: "stream",
      });
      await waitFor(() => ids.length > 0);
      expect(ids).toEqual([[record.id]]);
    } finally {
      await delivered.end();
    }
  });

  it("is sent by the worker's repeat statement, with the ids it sent again", async () => {
    const id = await published({ require_ack: true, repeat_every_seconds: 30 });
    const repeated = () => heard.some((n) => n.kind === "repeat" && n.ids.includes(id));
    await waitFor(repeated, 5000);
    expect(repeated()).toBe(true);
  });
});
