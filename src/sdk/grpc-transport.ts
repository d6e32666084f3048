import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import {
  type Compression,
  encodeEnvelope,
  envelopeDecompress,
  getAbortSignalReason,
  type Serialization,
} from "@connectrpc/connect/protocol";
import {
  headerGrpcStatus,
  requestHeaderWithCompression,
  validateResponseWithCompression,
  validateTrailer,
} from "@connectrpc/connect/protocol-grpc";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  accepted,
  connectErrorFromNode,
  copyHeaders,
  limits,
  nodeHeadersOf,
  runUnary,
  serializationOf,
} from "./node-transport.ts";

type Sessions = Http2SessionManager;
type H2Stream = Awaited<ReturnType<Sessions["request"]>>;

interface Answer {
  status: number;
  header: Headers;
  trailer: Headers;
  body: Buffer;
}

/** A gRPC transport to `baseUrl` whose unary calls keep nothing past their answer. */
export function createSdkGrpcTransport(baseUrl: string): Transport {
  const sessions = new Http2SessionManager(baseUrl);
  const streaming = createGrpcTransport({ baseUrl, sessionManager: sessions });
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      const serialization = serializationOf(method);
      const call = { method, signal, timeoutMs, input, contextValues };
      const sent = requestHeaderWithCompression(true, timeoutMs, header, accepted, null);
      return runUnary(baseUrl, call, sent, async (req) => {
        const body = encodeEnvelope(0, serialization.getI(true).serialize(req.message));
        const answer = await exchange(sessions, req.url, req.header, body, req.signal);
        const { status, header: h } = answer;
        const { compression, headerError } = validateResponseWithCompression(accepted, status, h);
        const parser = serialization.getO(true);
        const message = await onlyMessage(answer.body, limits.readMaxBytes, compression, parser);
        validateTrailer(answer.trailer, answer.header);
        if (message === undefined) {
          // A trailers-only answer: its status is in the headers.
          if (headerError) throw headerError;
          throw new ConnectError(
            "protocol error: missing output message for unary method",
            answer.trailer.has(headerGrpcStatus) ? Code.Unimplemented : Code.Unknown,
          );
        }
        const { trailer } = answer;
        return { stream: false, service: method.parent, method, header: h, message, trailer };
      });
    },
    stream: (...args) => streaming.stream(...args),
  };
}

/** The answer's one message (none in a trailers-only answer), as Connect's transport parses it. */
async function onlyMessage<T>(
  body: Buffer,
  readMaxBytes: number,
  compression: Compression | undefined,
  parser: Serialization<T>,
) {
  let message: T | undefined;
  for (let at = 0; at < body.length; ) {
    const length = body.length - at >= 5 ? body.readUInt32BE(at + 1) : -1;
    if (length < 0 || body.length - at - 5 < length) {
      throw new ConnectError("protocol error: incomplete envelope", Code.InvalidArgument);
    }
    if (length > readMaxBytes) {
      throw new ConnectError(
        `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
        Code.ResourceExhausted,
      );
    }
    if (message !== undefined) {
      throw new ConnectError(
        "protocol error: received extra output message for unary method",
        Code.Unimplemented,
      );
    }
    const data = body.subarray(at + 5, at + 5 + length);
    const flags = body[at] as number;
    message = parser.parse(
      (await envelopeDecompress({ flags, data }, compression ?? null, readMaxBytes)).data,
    );
    at += 5 + length;
  }
  return message;
}

/**
 * Sends the request's one envelope and reads the answer whole. Every listener leaves the stream
 * when the answer ends or fails: through them a finished stream would keep the call.
 */
async function exchange(
  sessions: Sessions,
  url: string,
  header: Headers,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<Answer> {
  const headers = nodeHeadersOf(header);
  const { pathname, search } = new URL(url);
  const stream = await untilAborted(
    sessions.request("POST", pathname + search, headers, {}),
    signal,
  );
  return new Promise<Answer>((resolve, reject) => {
    const answer: Answer = { status: 0, header: new Headers(), trailer: new Headers(), body: none };
    const parts: Buffer[] = [];
    const on = {
      response: (h: Record<string, unknown>) => {
        answer.status = Number(h[":status"]);
        copyHeaders(h, answer.header);
      },
      trailers: (t: Record<string, unknown>) => copyHeaders(t, answer.trailer),
      data: (chunk: Buffer) => {
        parts.push(chunk);
        sessions.notifyResponseByteRead(stream);
      },
      end: () => {
        settle();
        answer.body = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
        resolve(answer);
      },
      error: (err: unknown) => fail(connectErrorFromNode(err)),
      // Closed before its end: reset by the server or the connection (NO_ERROR ends it whole).
      close: () => (stream.rstCode === 0 ? on.end() : fail(resetError(stream.rstCode))),
    };
    const onAbort = () => {
      const reason = ConnectError.from(getAbortSignalReason(signal));
      // As Connect-node does: a cancelled call resets its stream with CANCEL (gRPC over HTTP/2).
      if (!stream.closed) stream.close(reason.code === Code.Canceled ? 8 : 2);
      fail(reason);
    };
    function settle() {
      for (const [event, listener] of Object.entries(on)) stream.off(event, listener);
      // A stream closed by us (or reset late) still reports its error: nobody needs it now.
      stream.on("error", ignore);
      signal.removeEventListener("abort", onAbort);
    }
    function fail(err: ConnectError) {
      settle();
      reject(err);
    }
    for (const [event, listener] of Object.entries(on)) stream.on(event, listener);
    signal.addEventListener("abort", onAbort);
    // Ended in the turns since the stream was given (by a microtask, say): end it now.
    if (signal.aborted) return onAbort();
    stream.end(body);
  });
}

/**
 * The stream, once the session has one for it; or the call's end, if its deadline passes or it is
 * cancelled first (while connecting, say): the stream that comes later is reset at once.
 */
function untilAborted(opening: Promise<H2Stream>, signal: AbortSignal): Promise<H2Stream> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(ConnectError.from(getAbortSignalReason(signal)));
      opening.then((late) => late.close(8), ignore); // CANCEL
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    opening.then(
      (stream) => {
        signal.removeEventListener("abort", onAbort);
        resolve(stream);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

const none = Buffer.alloc(0);
const ignore = () => {};

/** A stream closed before its answer ended, by its HTTP/2 reset code (Connect-node's mapping). */
function resetError(rstCode: number): ConnectError {
  const code =
    rstCode === 7 // REFUSED_STREAM
      ? Code.Unavailable
      : rstCode === 8 // CANCEL
        ? Code.Canceled
        : rstCode === 11 // ENHANCE_YOUR_CALM
          ? Code.ResourceExhausted
          : rstCode === 12 || rstCode === 13 // INADEQUATE_SECURITY, HTTP_1_1_REQUIRED
            ? Code.PermissionDenied
            : Code.Internal;
  return new ConnectError(`http/2 stream closed with error code 0x${rstCode.toString(16)}`, code);
}
