/**
 * The news of projects the group commit fanned out, told to every process's live feeds: what is
 * told within one window goes in one NOTIFY naming each project once (`*` past what a payload
 * holds), and a NOTIFY that fails is logged, not thrown, and does not stop the next.
 */
import { describe, expect, it } from "vitest";
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
