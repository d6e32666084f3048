/** The SDK's own types, shared by the client (herald.ts) and its questions (ask.ts). */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { NotifyRequestSchema } from "../../gen/herald/v1/notify_service_pb.ts";

/** A notification's priority (docs/delivery.md maps it per platform). */
export type Priority = "low" | "normal" | "high";

/**
 * What `notify` takes: the publish request, typed from the proto. Only `title` is required;
 * `priority` is one of the three values the server accepts.
 */
export type NotifyInput = MessageInitShape<typeof NotifyRequestSchema> & {
  title: string;
  priority?: Priority;
};

export interface HeraldOptions {
  /** A project API key (`hk_…`). Defaults to HERALD_API_KEY. */
  apiKey?: string;
  /** Or a CLI token (`hc_…`), which publishes into `project` or the default project. */
  token?: string;
  /** Project id or name for a CLI token (the `Herald-Project` header). */
  project?: string;
  /** Defaults to HERALD_URL, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** `connect` (HTTP/1.1 or 2, the default) or `grpc` (HTTP/2). */
  transport?: "connect" | "grpc";
  /** Per attempt. Default 10 s. */
  timeoutMs?: number;
  /** Retries of a transient failure. Default 5: 3.1 to 6.2 s in all (retry.ts). */
  maxRetries?: number;
}

export interface NotifyOptions {
  /**
   * Makes retries safe: a repeat with the same key in 24 h returns the original notification and
   * sends nothing again. One is generated per call when not given, and reused by the SDK's own
   * retries.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface ListFilter {
  topic?: string;
  /** 1..100, default 20. */
  pageSize?: number;
  pageToken?: string;
}
