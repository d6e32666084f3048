/**
 * Writes the publish the held-out run sends: DIR/notify.json and DIR/notify.grpc (one gRPC
 * frame), the same notification as every scenario.
 *
 *   node scripts/bench/bodies.ts DIR
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { create, toBinary } from "@bufbuild/protobuf";
import { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";

const benchNotification = { title: "Deploy finished", priority: "high", topic: "bench" };
const dir = process.argv[2] ?? ".";
const message = toBinary(NotifyRequestSchema, create(NotifyRequestSchema, benchNotification));
const frame = Buffer.alloc(5 + message.length);
frame.writeUInt32BE(message.length, 1);
frame.set(message, 5);
writeFileSync(join(dir, "notify.grpc"), frame);
writeFileSync(join(dir, "notify.json"), JSON.stringify(benchNotification));
