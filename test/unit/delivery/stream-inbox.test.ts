/**
 * What one live stream has to send, in order: its catch-up before anything that arrived live
 * meanwhile, each notification once, and a bounded wait for rows handed over in memory.
 */
import { describe, expect, it } from "vitest";
import { StreamInbox } from "../../../src/delivery/streams/inbox.ts";
import type { NotificationRecord } from "../../../src/domain/notification.ts";

const row = (id: string) => ({ id }) as NotificationRecord;

describe("StreamInbox", () => {
  it("gives the catch-up's ids first, and while catching up no others", () => {
    const inbox = new StreamInbox("device", 10_000);
    inbox.committed(["live"]);
    inbox.behind(["old-1", "old-2"]);
    expect(inbox.takeCommitted(true)).toEqual({ load: ["old-1", "old-2"], mark: [] });
    expect(inbox.takeCommitted(true)).toEqual({ load: [], mark: [] });
    expect(inbox.takeCommitted()).toEqual({ load: ["live"], mark: [] });
  });

  it("clears each notification once, however often its clear comes", () => {
    const inbox = new StreamInbox("device", 10_000);
    inbox.cleared("a", "phone");
    expect(inbox.takeCleared()).toEqual([{ id: "a", by: "phone" }]);
    // Heard live, then again from a hub that listens again after an outage.
    inbox.cleared("a", "phone");
    inbox.cleared("b", "");
    expect(inbox.takeCleared()).toEqual([{ id: "b", by: "" }]);
  });

  it("sends each once: a row handed over is only marked when its id comes again", () => {
    const inbox = new StreamInbox("device", 10_000);
    inbox.handed(row("a"));
    expect(inbox.takeHanded().map((r) => r.id)).toEqual(["a"]);
    inbox.behind(["a", "b"]);
    expect(inbox.takeCommitted(true)).toEqual({ load: ["b"], mark: ["a"] });
    inbox.committed(["a", "b"]);
    expect(inbox.takeCommitted()).toEqual({ load: [], mark: [] });
    inbox.handed(row("b"));
    expect(inbox.takeHanded()).toEqual([]);
  });

  it("holds at most 10,000 rows handed over; the oldest past that come with their news", () => {
    const inbox = new StreamInbox("device", 10_000);
    for (let i = 0; i <= 10_000; i++) inbox.handed(row(`n${i}`));
    const taken = inbox.takeHanded();
    expect(taken).toHaveLength(10_000);
    expect(taken[0]?.id).toBe("n1");
    inbox.committed(["n0"]);
    expect(inbox.takeCommitted()).toEqual({ load: ["n0"], mark: [] });
  });

  it("holds each committed id once, however often the hub tells it (its sweep every 30 s)", () => {
    const inbox = new StreamInbox("device", 10_000);
    const pending = Array.from({ length: 500 }, (_, i) => `p${i}`);
    for (let sweep = 0; sweep < 100; sweep++) inbox.committed(pending);
    // Before: 50,000 held, the same 500 a hundred times, for as long as the client did not read.
    expect(inbox.held).toBe(500);
    expect(inbox.takeOverflow()).toBe(false);
    expect(inbox.takeCommitted().load).toEqual(pending);
  });

  it("lets the ids go past its bound, and says the stream must catch up from the database", () => {
    const inbox = new StreamInbox("device", 100);
    inbox.handed(row("in-memory"));
    inbox.committed(Array.from({ length: 101 }, (_, i) => `n${i}`));
    expect(inbox.held).toBe(0);
    expect(inbox.takeOverflow()).toBe(true);
    expect(inbox.takeOverflow()).toBe(false);
    inbox.committed(["after"]);
    expect(inbox.takeCommitted()).toEqual({ load: ["after"], mark: [] });
  });
});
