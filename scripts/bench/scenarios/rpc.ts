/** Scenario 2: publish over gRPC and Connect with the generated client, and h2load's maximum. */
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { NotifyRequestSchema, NotifyService } from "../../../gen/herald/v1/notify_service_pb.ts";
import { createSdkGrpcTransport } from "../../../src/sdk/grpc-transport.ts";
import { benchNotification, fmt, log, record, secs } from "../context.ts";
import { h2loadMax, h2loadPacedRow } from "../h2load.ts";
import { auth, benchServer, url } from "../infrastructure.ts";
import { watchStalls } from "../loop-stalls.ts";
import { rawGrpcCaller } from "../raw-grpc.ts";
import { drive } from "../stats.ts";
import { judgeP99 } from "../targets.ts";

export async function rpcPublish(): Promise<void> {
  // --- 2. publish over gRPC and Connect ---------------------------------------------------
  log("2. publish over gRPC and Connect (generated client)");
  const request = benchNotification;
  const generated = (transport: Transport) => {
    const client = createClient(NotifyService, transport);
    return async () => {
      await client.notify(request, { headers: auth });
    };
  };
  const raw = rawGrpcCaller(url, "/herald.v1.NotifyService/Notify", auth);
  const message = toBinary(NotifyRequestSchema, create(NotifyRequestSchema, request));
  // The last column names the client in the p99's verdict (none: Connect over HTTP/1.1, no target).
  for (const [name, call, protocol, judged] of [
    ["gRPC", generated(createGrpcTransport({ baseUrl: url })), "grpc", "generated client"],
    [
      "gRPC (the SDK's transport)",
      generated(createSdkGrpcTransport(url)),
      "grpc",
      "generated client, the SDK's transport",
    ],
    [
      "Connect",
      generated(createConnectTransport({ baseUrl: url, httpVersion: "1.1" })),
      "connect",
      "",
    ],
    ["gRPC (bare HTTP/2 client)", () => raw.call(message), "grpc", "bare HTTP/2 client"],
  ] as const) {
    await drive(call, { seconds: secs(2), concurrency: 10 });
    const stalls = await watchStalls(benchServer, protocol, true);
    const fixed = await drive(call, { seconds: secs(10), concurrency: 50, rate: 500 });
    const where = await stalls();
    record(`${name} publish at 500/s offered`, `${fmt(fixed)}; ${where}`, fixed);
    if (judged) judgeP99(`gRPC (${judged})`, fixed.p99, where);
    const s = await drive(call, { seconds: secs(10), concurrency: 50 });
    record(`${name} publish, maximum (50 concurrent)`, fmt(s), s);
  }
  raw.close();
  await h2loadPacedRow("gRPC", "grpc");
  // The generated client costs CPU on the cores the server uses, more than autocannon does.
  // To compare the server's gRPC and REST paths alone, one C load generator drives both.
  const h2 = await h2loadMax();
  record("gRPC vs REST, maximum, both driven by h2load", h2.result, h2.data);
}
