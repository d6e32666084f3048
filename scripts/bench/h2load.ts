/**
 * gRPC (h2c) and REST (HTTP/1.1) at full speed, both driven by h2load (nghttp2), a C load
 * generator, so that neither protocol's number carries a Node client's cost.
 */
import { execFile, spawnSync } from "node:child_process";
import { promisify } from "node:util";
import { writeBodies } from "./bodies.ts";
import { secs, work } from "./context.ts";
import { auth, url } from "./infrastructure.ts";

export const h2loadInstalled = () => spawnSync("h2load", ["--version"]).status === 0;

export interface Target {
  url: string;
  authorization: string;
}

export interface H2loadResult {
  perSecond: number;
  errors: number;
  meanLatency: string | undefined;
}

/** The request bodies, written once into the benchmark's directory. */
let written: { grpc: string; rest: string } | undefined;
const bodies = () => {
  written ??= writeBodies(work);
  return written;
};

/**
 * Publishes at full speed for `seconds`: gRPC with 10 connections × 10 streams, REST over
 * HTTP/1.1 with 50 connections. Asynchronous, so that the benchmark can sample meanwhile.
 */
export async function h2load(
  target: Target,
  protocol: "grpc" | "rest",
  seconds: number,
): Promise<H2loadResult> {
  const b = bodies();
  const args =
    protocol === "grpc"
      ? ["-c", "10", "-m", "10", "-d", b.grpc, "-H", "content-type: application/grpc"]
      : ["--h1", "-c", "50", "-m", "1", "-d", b.rest, "-H", "content-type: application/json"];
  const path = protocol === "grpc" ? "/herald.v1.NotifyService/Notify" : "/v1/notify";
  const { stdout: out } = await promisify(execFile)(
    "h2load",
    [
      "-D",
      String(seconds),
      "-H",
      `authorization: ${target.authorization}`,
      ...(protocol === "grpc" ? ["-H", "te: trailers"] : []),
      ...args,
      `${target.url}${path}`,
    ],
    { encoding: "utf8" },
  );
  const rate = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1]);
  const codes = /status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
  const failed = /(\d+) failed, (\d+) errored/.exec(out);
  const errors = [codes?.[1], codes?.[2], codes?.[3], failed?.[2]].reduce(
    (sum, n) => sum + Number(n ?? 0),
    0,
  );
  const meanLatency = /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1];
  return { perSecond: Math.round(rate), errors, meanLatency };
}

/** Both protocols' maximum against the benchmark's server; optional, so the row says how. */
export async function h2loadMax(): Promise<{ result: string; data: unknown }> {
  if (!h2loadInstalled()) {
    return {
      result: "skipped: h2load is not installed (apt-get install nghttp2-client)",
      data: null,
    };
  }
  const target = { url, authorization: auth.authorization };
  const grpc = await h2load(target, "grpc", secs(10));
  const rest = await h2load(target, "rest", secs(10));
  return {
    result: `gRPC ${grpc.perSecond}/s (mean ${grpc.meanLatency}, errors ${grpc.errors}), REST ${rest.perSecond}/s (mean ${rest.meanLatency}, errors ${rest.errors})`,
    data: { grpc, rest },
  };
}
