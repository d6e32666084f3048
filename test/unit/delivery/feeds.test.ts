/**
 * The news of projects the group commit fanned out, told to every process's live feeds: what is
 * told within one window goes in one NOTIFY naming each project once (`*` past what a payload
 * holds), news that keeps coming is told at most once per 100 ms, and a NOTIFY that fails is
 * logged, not thrown, and does not stop the next.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { Feeds } from "../../../src/delivery/streams/feeds.ts";

/** Feeds whose NOTIFYs are recorded; `next()` resolves with the next payload sent. */
function recorded(fail = false) {
  const sent: string[] = [];
  const warnings: string[] = [];
  let heard: ((p: string) => void) | undefined;
  const log = {
    debug() {},
    info() {},
    error() {},
    warn: (_: unknown, m?: string) => void warnings.push(m ?? ""),
  };
  const feeds = new Feeds(async (payload) => {
    sent.push(payload);
    heard?.(payload);
    if (fail) throw new Error("connection lost");
  }, log);
  const next = () => new Promise<string>((resolve) => (heard = resolve));
  return { feeds, sent, warnings, next };
}

describe("Feeds.tell", () => {
  it("tells the projects of many commits in one NOTIFY, each once, and the next window anew", async () => {
    const { feeds, sent, next } = recorded();
    const first = next();
    feeds.tell(["a", "b"]);
    feeds.tell(["b", "c"]);
    feeds.tell([]);
    expect(sent).toEqual([]); // not before the window ends
    expect((await first).split(",").sort()).toEqual(["a", "b", "c"]);
    const second = next();
    feeds.tell(["d"]);
    expect(await second).toBe("d");
    expect(sent).toHaveLength(2);
  });

  describe("while news keeps coming", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("tells it at most once per 100 ms, and news after a quiet spell within 10 ms", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
      const start = performance.now();
      const { feeds, sent } = recorded();
      feeds.tell(["a"]);
      await vi.advanceTimersByTimeAsync(10);
      expect(sent).toEqual(["a"]);
      // A busy spell: news every 5 ms for 300 ms goes out 100 ms after the NOTIFY before it.
      const at: number[] = [];
      for (let t = 0; t < 300; t += 5) {
        feeds.tell([`p${t}`]);
        const before = sent.length;
        await vi.advanceTimersByTimeAsync(5);
        if (sent.length > before) at.push(performance.now());
      }
      expect(at.length).toBeGreaterThanOrEqual(2);
      for (const [i, t] of at.entries())
        expect(t - (at[i - 1] ?? start + 10)).toBeGreaterThanOrEqual(100);
      await vi.advanceTimersByTimeAsync(100);
      // Every project told was in some NOTIFY, each once.
      const told = sent.slice(1).flatMap((p) => p.split(","));
      expect(told.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `p${i * 5}`).sort());
      // Quiet for longer than the gap: the next news leaves after the window alone.
      await vi.advanceTimersByTimeAsync(200);
      const n = sent.length;
      feeds.tell(["z"]);
      await vi.advanceTimersByTimeAsync(10);
      expect(sent.slice(n)).toEqual(["z"]);
    });
  });

  it("says every project (*) past what one payload holds", async () => {
    const { feeds, next } = recorded();
    const sent = next();
    feeds.tell(
      Array.from(
        { length: 151 },
        (_, i) => `00000000-0000-0000-0000-${String(i).padStart(12, "0")}`,
      ),
    );
    expect(await sent).toBe("*");
  });

  it("logs a NOTIFY that fails and tells the next window's news", async () => {
    const { feeds, warnings, next } = recorded(true);
    const first = next();
    feeds.tell(["a"]);
    await first;
    await expect
      .poll(() => warnings)
      .toEqual(["telling the live feeds failed; they refresh within 5 s"]);
    const second = next();
    feeds.tell(["b"]);
    expect(await second).toBe("b");
  });
});
