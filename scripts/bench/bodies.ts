/**
 * The publish every scenario sends, and its request bodies on disk for h2load: DIR/notify.json,
 * DIR/notify.grpc (one gRPC frame) and DIR/notify.bin (the message alone: a Connect unary
 * call's binary body). The held-out run writes them from the command line.
 *
 *   node scripts/bench/bodies.ts DIR
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";

/** The same publish everywhere. */
export const benchNotification = { title: "Deploy finished", priority: "high", topic: "bench" };

/** Writes the bodies into `dir`; answers their paths. */
export function writeBodies(dir: string): { grpc: string; rest: string; connect: string } {
  const message = toBinary(NotifyRequestSchema, create(NotifyRequestSchema, benchNotification));
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  const paths = {
    grpc: join(dir, "notify.grpc"),
    rest: join(dir, "notify.json"),
    connect: join(dir, "notify.bin"),
  };
  writeFileSync(paths.grpc, frame);
  writeFileSync(paths.connect, message);
  writeFileSync(paths.rest, JSON.stringify(benchNotification));
  return paths;
}

if (import.meta.filename === process.argv[1]) writeBodies(process.argv[2] ?? ".");
