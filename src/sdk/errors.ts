import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
} from "../../gen/google/rpc/error_details_pb.ts";
import { catalogue, codeByConnectCode, type ErrorCode } from "../errors.ts";

/** The HTTP status REST answers for a code (0 for codes of the client's own, like `network`). */
const statusOf = (code: string): number =>
  code in catalogue ? catalogue[code as ErrorCode].status : 0;

/**
 * The one error type the SDK throws. `code` is Herald's stable code (`invalid_argument`,
 * `rate_limited`, …, or `network` when the server could not be reached); branch on it, not on
 * the message.
 */
export class HeraldError extends Error {
  override readonly name = "HeraldError";
  /** Herald's stable error code. */
  readonly code: string;
  /** The HTTP status REST would have answered (0 for network errors). */
  readonly status: number;
  /** Every invalid field, for `invalid_argument`. */
  readonly violations: readonly { field: string; message: string }[];
  /** The server's request id, to quote in a support request. */
  readonly requestId: string | undefined;
  /** How long the server asked to wait before retrying, if it did. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    init: {
      code: string;
      status: number;
      violations?: { field: string; message: string }[];
      requestId?: string;
      retryAfterMs?: number;
      cause?: unknown;
    },
  ) {
    super(message, { cause: init.cause });
    this.code = init.code;
    this.status = init.status;
    this.violations = init.violations ?? [];
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** Translates what a Connect call threw. */
  static from(err: unknown): HeraldError {
    if (err instanceof HeraldError) return err;
    const ce = ConnectError.from(err);
    const info = ce.findDetails(ErrorInfoSchema)[0];
    const code =
      info?.reason ??
      // Without Herald's ErrorInfo, these mean the server was not reached or the connection
      // broke (Connect reports a reset socket as `aborted`): a client-side notion the server's
      // table cannot have.
      (ce.code === Code.Unavailable || ce.code === Code.Unknown || ce.code === Code.Aborted
        ? "network"
        : (codeByConnectCode[ce.code] ?? "internal"));
    const retry = ce.findDetails(RetryInfoSchema)[0]?.retryDelay;
    const retryAfter = ce.metadata.get("retry-after");
    return new HeraldError(ce.rawMessage, {
      code,
      status: statusOf(code),
      violations: ce
        .findDetails(BadRequestSchema)
        .flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, message: v.description }))),
      requestId: ce.metadata.get("request-id") ?? undefined,
      retryAfterMs: retry
        ? Number(retry.seconds) * 1000
        : retryAfter
          ? Number(retryAfter) * 1000
          : undefined,
      cause: err,
    });
  }
}
