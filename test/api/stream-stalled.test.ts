/**
 * A stream whose client stops reading (a `herald listen` suspended, a hostile client) while
 * notifications keep coming: the server holds at most `streamHeldIds` of their ids for it (here
 * 20), lets the rest go, and when the client reads again catches it up from the database.
 * Every notification arrives, once, in order. Before, every id was held (and the hub's sweep
 * added the pending ones again every 30 s) for as long as the client did not read.
 */
import http2 from "node:http2";
import type { Readable } from "node:stream";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SubscribeResponseSchema } from "../../gen/herald/v1/inbox_service_pb.ts";
import { defaultLimits } from "../../src/domain/limits.ts";
import { capturedLog, notify, startServer, type TestServer } from "../helpers/server.ts";
import { signInStreamDevice } from "../helpers/streams.ts";
import { waitFor } from "../helpers/wait.ts";

const log = capturedLog("info");
let server: TestServer;
beforeAll(async () => {
  server = await startServer(
    {
      streamHeldIds: 20,
      rateLimitBurst: 1_000,
      limits: { ...defaultLimits, accountRequestBurst: 1_000 },
    },
    undefined,
    undefined,
    log.logger,
  );
});
afterAll(async () => server.close());

/** gRPC's length-prefixed messages of a response body, decoded as Subscribe's. */
async function* grpcFrames(body: Readable) {
  let buffered = Buffer.alloc(0);
  for await (const chunk of body) {
    buffered = Buffer.concat([buffered, chunk as Buffer]);
    while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
      const size = buffered.readUInt32BE(1);
      yield fromBinary(SubscribeResponseSchema, buffered.subarray(5, 5 + size));
      buffered = buffered.subarray(5 + size);
    }
  }
}

describe("a stream whose client stops reading", () => {
  it("holds a bounded number of ids, then catches up from the database: each arrives once, in order", async () => {
    const device = await signInStreamDevice(server.url, "stalls", ["stalled"]);
    // A gRPC client of its own, whose reading is paused: HTTP/2's flow control then stops the
    // server's writes once the stream's window (64 KB) is full, as a client that stops reading.
    const session = http2.connect(server.url);
    const call = session.request({
      ":method": "POST",
      ":path": "/herald.v1.InboxService/Subscribe",
      "content-type": "application/grpc",
      te: "trailers",
      authorization: `Bearer ${device.credential}`,
    });
    call.end(Buffer.alloc(5)); // one empty SubscribeRequest
    const frames = grpcFrames(call);
    expect((await frames.next()).value?.event.case).toBe("keepalive");
    call.pause();
    // The client reads nothing from here: 4 KB messages fill HTTP/2's window and the buffers.
    const message = "é".repeat(2000);
    const published: string[] = [];
    for (let i = 0; i < 120; i++) {
      const r = await notify(server, { title: `stalled ${i}`, topic: "stalled", message });
      expect(r.status).toBe(202);
      published.push(r.json.id as string);
    }
    // Reading again: the held ids were let go, and the stream caught up from the database.
    const received: string[] = [];
    call.resume();
    while (received.length < published.length) {
      const next = await frames.next();
      if (next.done) break;
      if (next.value.event.case === "notification") received.push(next.value.event.value.id);
    }
    call.close();
    session.close();
    expect(received).toEqual(published);
    await waitFor(() => log.text().includes("caught up from the database"), 5_000);
    expect(
      log.entries().filter((e) => e.msg.includes("caught up from the database")).length,
    ).toBeGreaterThan(0);
  }, 60_000);
});
