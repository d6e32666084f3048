/**
 * The publishes the scenarios send, and their request bodies on disk for h2load: DIR/notify.json,
 * DIR/notify.grpc (one gRPC frame) and DIR/notify.bin (the message alone: a Connect unary
 * call's binary body), and the same with `-ci` for the CI notification. The held-out run writes
 * them from the command line.
 *
 *   node scripts/bench/bodies.ts DIR [bench|ci]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";

/** The same publish everywhere: a title, a topic, a priority (61 bytes of JSON). */
export const benchNotification = { title: "Deploy finished", priority: "high", topic: "bench" };

/**
 * What a CI job sends when a build fails (657 bytes of JSON): a message with quotes and line
 * breaks, a link to the job, and six keys of metadata. Measured beside the benchmark's publish
 * (scenario 7, not a target), since what a publish costs follows its content (BENCHMARKS.md).
 */
export const ciNotification = {
  title: "Build failed: herald/main #4812",
  message: [
    'Job "test (node 24)" failed after 6m 12s.',
    "",
    "FAIL test/api/notify.test.ts > POST /v1/notify > replays an Idempotency-Key",
    "AssertionError: expected 202 to be 200 // Object.is equality",
    "  at test/api/notify.test.ts:118:24",
    "",
    '1 failed, 1,380 passed (135 files). Re-run with "npm test -- notify" to reproduce locally.',
  ].join("\n"),
  click_url: "https://ci.example.com/herald/herald/actions/runs/4812/job/99123?pr=77#step:5:31",
  metadata: {
    repo: "herald/herald",
    branch: "main",
    commit: "9f2c4e1b7a0d3c5e8f6a1b2c3d4e5f60718293a4",
    run_id: 4812,
    duration_ms: 372114,
    status: "failure",
  },
  priority: "high",
  topic: "ci",
};

/** The publishes by name: the benchmark's own, and the CI job's. */
export const publishes = { bench: benchNotification, ci: ciNotification } as const;
export type Body = keyof typeof publishes;

/** The size of a publish's REST body: its JSON, in UTF-8. */
export const jsonBytes = (publish: object): number =>
  Buffer.byteLength(JSON.stringify(publish), "utf8");

/** Writes `body`'s request bodies into `dir`; answers their paths. */
export function writeBodies(
  dir: string,
  body: Body = "bench",
): { grpc: string; rest: string; connect: string } {
  const json = publishes[body] as JsonObject;
  const message = toBinary(NotifyRequestSchema, fromJson(NotifyRequestSchema, json));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const suffix = body === "bench" ? "" : `-${body}`;
  const paths = {
    grpc: join(dir, `notify${suffix}.grpc`),
    rest: join(dir, `notify${suffix}.json`),
    connect: join(dir, `notify${suffix}.bin`),
  };
  writeFileSync(paths.grpc, frame);
  writeFileSync(paths.connect, message);
  writeFileSync(paths.rest, JSON.stringify(json));
  return paths;
}

if (import.meta.filename === process.argv[1]) {
  const body = process.argv[3] ?? "bench";
  if (!Object.hasOwn(publishes, body)) throw new Error(`no such publish: ${body} (bench or ci)`);
  writeBodies(process.argv[2] ?? ".", body as Body);
}
