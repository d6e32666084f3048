/**
 * The one catalogue of Herald's stable error codes. Every error a client sees carries one of
 * these codes: in the `code` member of an RFC 9457 problem (REST), and as the `reason` of a
 * `google.rpc.ErrorInfo` detail (gRPC, Connect, gRPC-Web). Codes never change meaning; new ones
 * may be added. docs/api.md lists them.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type BadRequest_FieldViolation,
  BadRequestSchema,
  ErrorInfoSchema,
  RetryInfoSchema,
} from "../gen/google/rpc/error_details_pb.ts";

export const errorDomain = "herald.dev";

interface CatalogueEntry {
  /** The Connect/gRPC code the error travels with. */
  connect: Code;
  /** The HTTP status of the REST answer. */
  status: number;
  /** The problem's `title`: short, the same for every occurrence. */
  title: string;
}

export const catalogue = {
  invalid_argument: { connect: Code.InvalidArgument, status: 400, title: "Invalid request" },
  unauthenticated: { connect: Code.Unauthenticated, status: 401, title: "Not authenticated" },
  permission_denied: { connect: Code.PermissionDenied, status: 403, title: "Permission denied" },
  not_found: { connect: Code.NotFound, status: 404, title: "Not found" },
  method_not_allowed: { connect: Code.Unimplemented, status: 405, title: "Method not allowed" },
  idempotency_key_in_use: {
    connect: Code.Aborted,
    status: 409,
    title: "Idempotency key in use by a request still in progress",
  },
  payload_too_large: {
    connect: Code.ResourceExhausted,
    status: 413,
    title: "Request body too large",
  },
  unsupported_media_type: {
    connect: Code.InvalidArgument,
    status: 415,
    title: "Unsupported media type",
  },
  idempotency_key_reused: {
    connect: Code.FailedPrecondition,
    status: 422,
    title: "Idempotency key reused with a different request",
  },
  already_exists: { connect: Code.AlreadyExists, status: 409, title: "Already exists" },
  limit_exceeded: {
    connect: Code.ResourceExhausted,
    status: 409,
    title: "A limit of the account or project is reached",
  },
  failed_precondition: {
    connect: Code.FailedPrecondition,
    status: 409,
    title: "Not possible in the current state",
  },
  not_cancelable: {
    connect: Code.FailedPrecondition,
    status: 409,
    title: "Nothing left to cancel",
  },
  already_answered: {
    connect: Code.AlreadyExists,
    status: 409,
    title: "Already answered",
  },
  expired: { connect: Code.FailedPrecondition, status: 410, title: "Expired" },
  rate_limited: { connect: Code.ResourceExhausted, status: 429, title: "Too many requests" },
  quota_exceeded: {
    connect: Code.ResourceExhausted,
    status: 429,
    title: "Monthly notification quota used up",
  },
  canceled: { connect: Code.Canceled, status: 499, title: "Request canceled by the client" },
  internal: { connect: Code.Internal, status: 500, title: "Internal error" },
  unavailable: { connect: Code.Unavailable, status: 503, title: "Service unavailable" },
  deadline_exceeded: { connect: Code.DeadlineExceeded, status: 504, title: "Deadline exceeded" },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof catalogue;

/** A field that failed validation: `field` is the snake_case path as in the request JSON. */
export interface FieldViolation {
  field: string;
  message: string;
}

export interface HeraldErrorOptions {
  violations?: readonly FieldViolation[];
  /** Seconds after which a retry may succeed; sent as RetryInfo and `Retry-After`. */
  retryAfterSeconds?: number;
  /** Response metadata that must travel with the error (e.g. rate-limit headers). */
  metadata?: ConstructorParameters<typeof Headers>[0];
  /** The original error, for logs only: never sent to the client. */
  cause?: unknown;
  /** ErrorInfo's metadata: machine-readable facts of the error (a limit's name and value). */
  info?: Record<string, string>;
}

/** Creates the ConnectError for a catalogue code, with ErrorInfo and, if any, field violations. */
export function heraldError(code: ErrorCode, detail: string, opts: HeraldErrorOptions = {}) {
  const details: ConstructorParameters<typeof ConnectError>[3] = [
    {
      desc: ErrorInfoSchema,
      value: { reason: code, domain: errorDomain, metadata: opts.info ?? {} },
    },
  ];
  if (opts.violations && opts.violations.length > 0) {
    details.push({
      desc: BadRequestSchema,
      value: {
        fieldViolations: opts.violations.map((v) => ({
          field: v.field,
          description: v.message,
        })),
      },
    });
  }
  if (opts.retryAfterSeconds !== undefined) {
    details.push({
      desc: RetryInfoSchema,
      value: { retryDelay: { seconds: BigInt(Math.ceil(opts.retryAfterSeconds)) } },
    });
  }
  return new ConnectError(detail, catalogue[code].connect, opts.metadata, details, opts.cause);
}

/**
 * The catalogue code of an error that carries no Herald ErrorInfo, by its Connect code: the one
 * table the server (errors raised by Connect itself) and the SDK (errors of the call) share.
 * `Aborted` is a call cut short (the server shutting down, a reset connection), not an
 * idempotency conflict: that one always carries its ErrorInfo.
 */
export const codeByConnectCode: Partial<Record<Code, ErrorCode>> = {
  [Code.InvalidArgument]: "invalid_argument",
  [Code.OutOfRange]: "invalid_argument",
  [Code.Unauthenticated]: "unauthenticated",
  [Code.PermissionDenied]: "permission_denied",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "already_exists",
  [Code.Unimplemented]: "not_found",
  [Code.Aborted]: "unavailable",
  [Code.ResourceExhausted]: "rate_limited",
  [Code.Unavailable]: "unavailable",
  [Code.Canceled]: "canceled",
  [Code.DeadlineExceeded]: "deadline_exceeded",
};

/** What a client is told about an error: the stable code, a safe detail and field violations. */
export interface PublicError {
  code: ErrorCode;
  detail: string;
  violations: FieldViolation[];
  retryAfterSeconds: number | undefined;
  /** ErrorInfo's metadata (a limit's name and value). */
  info: Record<string, string>;
}

/**
 * Reduces any error to what may be shown to a client. Errors that are not ConnectErrors, and
 * internal ones, are described generically: their message stays in the logs.
 */
export function publicError(err: unknown): PublicError {
  const ce = err instanceof ConnectError ? err : undefined;
  const info = ce?.findDetails(ErrorInfoSchema).find((d) => d.domain === errorDomain);
  const code: ErrorCode =
    info && info.reason in catalogue
      ? (info.reason as ErrorCode)
      : ((ce && codeByConnectCode[ce.code]) ?? "internal");
  const violations = (ce?.findDetails(BadRequestSchema) ?? []).flatMap((b) =>
    b.fieldViolations.map((v: BadRequest_FieldViolation) => ({
      field: v.field,
      message: v.description,
    })),
  );
  const retry = ce?.findDetails(RetryInfoSchema)[0]?.retryDelay;
  const exposed = code !== "internal" && ce !== undefined;
  return {
    code,
    detail: exposed ? ce.rawMessage : "An internal error occurred; quote the request_id.",
    violations,
    retryAfterSeconds: retry ? Number(retry.seconds) : undefined,
    info: info?.metadata ?? {},
  };
}
