/**
 * `listen`'s receipts in the background (src/cli/receipts.ts), against a scripted server: in
 * order, once each, a refused one again after its Retry-After, a final answer dropped, and a
 * close that does not wait for good. The listen command's own test runs them against a server
 * (test/api/cli-listen.test.ts).
 */
import { describe, expect, it } from "vitest";
import { Receipts } from "../../../src/cli/receipts.ts";
import { HeraldError } from "../../../src/sdk/errors.ts";
import { waitFor } from "../../helpers/wait.ts";

const refused = (code: string, retryAfterMs?: number) =>
  new HeraldError(code, { code, status: 429, ...(retryAfterMs ? { retryAfterMs } : {}) });

describe("listen's receipts", () => {
  it("go in order, once each; one refused goes again after the server's Retry-After", async () => {
    const tried: [string, number][] = [];
    const answers: (HeraldError | undefined)[] = [undefined, refused("rate_limited", 300)];
    const r = new Receipts(async (id) => {
      tried.push([id, performance.now()]);
      const answer = answers.shift();
      if (answer) throw answer;
    });
    for (const id of ["a", "b", "b", "c"]) r.add(id);
    expect(r.has("b")).toBe(true);
    await waitFor(() => !r.has("c"));
    expect(tried.map(([id]) => id)).toEqual(["a", "b", "b", "c"]);
    const [, firstB] = tried[1] as [string, number];
    const [, againB] = tried[2] as [string, number];
    expect(againB - firstB).toBeGreaterThanOrEqual(290);
    expect(r.has("a") || r.has("b")).toBe(false);
  });

  it("drop one the server will never take, and go on", async () => {
    const sent: string[] = [];
    const r = new Receipts(async (id) => {
      if (id === "gone") throw refused("not_found");
      sent.push(id);
    });
    for (const id of ["gone", "next"]) r.add(id);
    await waitFor(() => !r.has("next"));
    expect(sent).toEqual(["next"]);
    expect(r.has("gone")).toBe(false);
  });

  it("hold 10,000 waiting at most: the oldest waiting is dropped, never the one on its way", async () => {
    const sent: string[] = [];
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const r = new Receipts(async (id) => {
      if (id === "0") await held;
      sent.push(id);
    });
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
    const r = new Receipts(async () => {
      tries++;
      throw refused("network");
    });
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
