/**
 * gRPC (h2c) and REST (HTTP/1.1) at full speed, both driven by h2load (nghttp2), a C load
 * generator, so that neither protocol's number carries a Node client's cost.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";
import { benchNotification, secs, work } from "./context.ts";
import { auth, url } from "./infrastructure.ts";

/**
 * gRPC (10 connections × 10 streams) and REST over HTTP/1.1 (50 connections) at full speed with
 * h2load (nghttp2), when it is installed; it is optional, so the row says how to get it.
 */
export function h2loadMax(): { result: string; data: unknown } {
  if (spawnSync("h2load", ["--version"]).status !== 0) {
    return {
      result: "skipped: h2load is not installed (apt-get install nghttp2-client)",
      data: null,
    };
  }
  const message = toBinary(NotifyRequestSchema, create(NotifyRequestSchema, benchNotification));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const grpcBody = join(work, "notify.grpc");
  writeFileSync(grpcBody, frame);
  const restBody = join(work, "notify.json");
  writeFileSync(restBody, JSON.stringify(benchNotification));
  const run = (args: string[]) => {
    const out = execFileSync(
      "h2load",
      ["-D", String(secs(10)), "-H", `authorization: ${auth.authorization}`, ...args],
      { encoding: "utf8" },
    );
    const rate = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(out)?.[1]);
    const codes = /status codes: \d+ 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(out);
    const failed = /(\d+) failed, (\d+) errored/.exec(out);
    const errors = [codes?.[1], codes?.[2], codes?.[3], failed?.[2]].reduce(
      (sum, n) => sum + Number(n ?? 0),
      0,
    );
    const mean = /time for request:\s+\S+\s+\S+\s+(\S+)/.exec(out)?.[1];
    return { perSecond: Math.round(rate), errors, meanLatency: mean };
  };
  const grpc = run([
    "-c",
    "10",
    "-m",
    "10",
    "-d",
    grpcBody,
    "-H",
    "content-type: application/grpc",
    "-H",
    "te: trailers",
    `${url}/herald.v1.NotifyService/Notify`,
  ]);
  const rest = run([
    "--h1",
    "-c",
    "50",
    "-m",
    "1",
    "-d",
    restBody,
    "-H",
    "content-type: application/json",
    `${url}/v1/notify`,
  ]);
  return {
    result: `gRPC ${grpc.perSecond}/s (mean ${grpc.meanLatency}, errors ${grpc.errors}), REST ${rest.perSecond}/s (mean ${rest.meanLatency}, errors ${rest.errors})`,
    data: { grpc, rest },
  };
}
