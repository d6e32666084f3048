/**
 * Receipts in the background (src/sdk/receipts.ts: `herald listen`'s and the console's stream
 * device's), against a scripted server: in order, once each, those waiting together in one call,
 * a refused call again after its Retry-After, a final answer dropped, a server from before
 * ConfirmReceipts asked one at a time, and a close that does not wait for good. The listen
 * command's own test runs them against a server (test/api/cli-listen.test.ts).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { HeraldError } from "../../../src/sdk/errors.ts";
import { type ReceiptCalls, Receipts } from "../../../src/sdk/receipts.ts";
import { waitFor } from "../../helpers/wait.ts";

const refused = (code: string, retryAfterMs?: number) =>
  new HeraldError(code, { code, status: 429, ...(retryAfterMs ? { retryAfterMs } : {}) });

/** A promise held until released. */
function gate() {
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  return { held, release };
}

/** Calls in batches only: a call one at a time would be a mistake here. */
const batches = (many: ReceiptCalls["many"]): ReceiptCalls => ({
  many,
  one: async () => {
    throw new Error("asked one at a time");
  },
});

describe("listen's receipts", () => {
  it("go in order, once each, those waiting in one call; a refused call goes again after the server's Retry-After", async () => {
    const tried: [string[], number][] = [];
    const answers: (HeraldError | undefined)[] = [undefined, refused("rate_limited", 300)];
    const r = new Receipts(
      batches(async (ids) => {
        tried.push([ids, performance.now()]);
        const answer = answers.shift();
        if (answer) throw answer;
      }),
    );
    for (const id of ["a", "b", "b", "c"]) r.add(id);
    expect(r.has("b")).toBe(true);
    await waitFor(() => !r.has("c"));
    // "a" went at once; "b" and "c" waited for it, then went together, twice.
    expect(tried.map(([ids]) => ids)).toEqual([["a"], ["b", "c"], ["b", "c"]]);
    const [, first] = tried[1] as [string[], number];
    const [, again] = tried[2] as [string[], number];
    expect(again - first).toBeGreaterThanOrEqual(290);
    expect(r.has("a") || r.has("b")).toBe(false);
  });

  it("go at most `most` to a call", async () => {
    const sizes: number[] = [];
    const { held, release } = gate();
    const r = new Receipts(
      batches(async (ids) => {
        sizes.push(ids.length);
        if (sizes.length === 1) await held;
      }),
      2,
    );
    for (const id of ["1", "2", "3", "4", "5", "6"]) r.add(id);
    release();
    await waitFor(() => !r.has("6"));
    expect(sizes).toEqual([1, 2, 2, 1]);
  });

  it("drop a call the server will never take, and go on", async () => {
    const sent: string[] = [];
    const r = new Receipts(
      batches(async (ids) => {
        if (ids.includes("gone")) throw refused("invalid_argument");
        sent.push(...ids);
      }),
    );
    for (const id of ["gone", "next"]) r.add(id);
    await waitFor(() => !r.has("next"));
    expect(sent).toEqual(["next"]);
    expect(r.has("gone")).toBe(false);
  });

  it("go one at a time, in order, to a server from before ConfirmReceipts", async () => {
    let batchCalls = 0;
    const one: string[] = [];
    const { held, release } = gate();
    const r = new Receipts({
      many: async () => {
        batchCalls++;
        await held;
        throw new ConnectError("HTTP 404", Code.Unimplemented);
      },
      one: async (id) => {
        one.push(id);
      },
    });
    for (const id of ["a", "b", "c"]) r.add(id);
    release();
    await waitFor(() => !r.has("c"));
    expect(batchCalls).toBe(1);
    expect(one).toEqual(["a", "b", "c"]);
  });

  it("hold 10,000 waiting at most: the oldest waiting is dropped, never those on their way", async () => {
    const sent: string[] = [];
    const { held, release } = gate();
    const r = new Receipts(
      batches(async (ids) => {
        if (ids.includes("0")) await held;
        sent.push(...ids);
      }),
    );
    for (let i = 0; i <= 10_001; i++) r.add(String(i));
    // "0" is on its way; of the 10,001 waiting behind it, "1" made room for "10001".
    expect(r.has("0")).toBe(true);
    expect(r.has("1")).toBe(false);
    release();
    await waitFor(() => !r.has("10001"));
    expect(sent.length).toBe(10_001);
    expect(sent.slice(0, 3)).toEqual(["0", "2", "3"]);
    expect(sent.at(-1)).toBe("10001");
  });

  it("close gives them its time and no more, keeping what was not recorded", async () => {
    let tries = 0;
    const r = new Receipts(
      batches(async () => {
        tries++;
        throw refused("network");
      }),
    );
    r.add("x");
    const t0 = performance.now();
    await r.close(400);
    const took = performance.now() - t0;
    expect(took).toBeGreaterThanOrEqual(390);
    expect(took).toBeLessThan(2_000);
    expect(tries).toBeGreaterThanOrEqual(1);
    r.add("y");
    expect(r.has("y")).toBe(false);
  });
});
