/**
 * The SDK's default transport: the Connect protocol over HTTP/1.1. Unary calls are one request
 * written whole and one answer read whole with `node:http`; streaming calls go through
 * Connect-node's Connect transport.
 *
 * Why, as for gRPC (grpc-transport.ts): Connect-node's client reads a unary answer through an
 * async iterable over the response, a sentinel and `pipeTo`, compiled to ES2017 helpers, and
 * each call's objects outlived young-generation collections. At 500 calls/s against a bare
 * server it promoted 8.2-8.9 KB a call and spent 654-660 µs of the client's CPU on it; a plain
 * `node:http` request promoted 52-59 bytes and spent 358-366 µs (BENCHMARKS.md, thirtieth session).
 *
 * The wire and the errors stay Connect's: `requestHeaderWithCompression`,
 * `validateResponseWithCompression`, `trailerDemux` and `errorFromJsonBytes` from Connect's
 * protocol package, and interceptors and deadlines through `runUnaryCall`. The differential test
 * (test/api/sdk-connect-transport.test.ts) compares both transports call by call.
 */
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { appendHeaders, ConnectError, type Transport } from "@connectrpc/connect";
import { getAbortSignalReason, readAllBytes } from "@connectrpc/connect/protocol";
import {
  errorFromJsonBytes,
  requestHeaderWithCompression,
  trailerDemux,
  validateResponseWithCompression,
} from "@connectrpc/connect/protocol-connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import {
  accepted,
  connectErrorFromNode,
  copyHeaders,
  limits,
  nodeHeadersOf,
  runUnary,
  serializationOf,
} from "./node-transport.ts";

interface Answer {
  status: number;
  header: Headers;
  body: Buffer;
}

/** A Connect transport over HTTP/1.1 to `baseUrl` whose unary calls keep nothing past their answer. */
export function createSdkConnectTransport(baseUrl: string): Transport {
  const streaming = createConnectTransport({ baseUrl, httpVersion: "1.1" });
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      const serialization = serializationOf(method);
      const kind = method.methodKind;
      const call = { method, signal, timeoutMs, input, contextValues };
      const sent = requestHeaderWithCompression(
        kind,
        true,
        timeoutMs,
        header,
        accepted,
        null,
        true,
      );
      return runUnary(baseUrl, call, sent, async (req) => {
        const body = serialization.getI(true).serialize(req.message);
        const answer = await exchange(req.url, req.header, body, req.signal);
        const { compression, isUnaryError, unaryError } = validateResponseWithCompression(
          kind,
          accepted,
          true,
          answer.status,
          answer.header,
        );
        const [h, trailer] = trailerDemux(answer.header);
        // Checked against its Content-Length and the read limit as Connect's transport does.
        const promised = answer.header.get("content-length");
        let bytes = await readAllBytes(once(answer.body), limits.readMaxBytes, promised);
        if (compression) bytes = await compression.decompress(bytes, limits.readMaxBytes);
        if (isUnaryError) throw errorFromJsonBytes(bytes, appendHeaders(h, trailer), unaryError);
        const message = serialization.getO(true).parse(bytes);
        return { stream: false, service: method.parent, method, header: h, message, trailer };
      });
    },
    stream: (...args) => streaming.stream(...args),
  };
}

/** One chunk as the async iterable `readAllBytes` takes. */
async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/**
 * Sends the request and reads the answer whole. A deadline or cancel destroys the request, as
 * Connect-node's does; every listener leaves the request and the response when the call ends.
 */
function exchange(url: string, header: Headers, body: Uint8Array, signal: AbortSignal) {
  return new Promise<Answer>((resolve, reject) => {
    if (signal.aborted) return reject(ConnectError.from(getAbortSignalReason(signal)));
    const options = { method: "POST", headers: nodeHeadersOf(header) };
    const req = url.startsWith("https:") ? https.request(url, options) : http.request(url, options);
    let res: IncomingMessage | undefined;
    const parts: Buffer[] = [];
    const data = (chunk: Buffer) => parts.push(chunk);
    const end = () => {
      settle();
      const status = res?.statusCode ?? 0;
      const answer: Answer = { status, header: new Headers(), body: Buffer.concat(parts) };
      // The Connect protocol's unary trailers come as `trailer-` headers (trailerDemux).
      copyHeaders(res?.headers ?? {}, answer.header);
      resolve(answer);
    };
    const failed = (err: unknown) => fail(connectErrorFromNode(err));
    const response = (r: IncomingMessage) => {
      res = r;
      r.on("data", data);
      r.once("end", end);
      r.once("error", failed);
    };
    const onAbort = () => {
      const reason = ConnectError.from(getAbortSignalReason(signal));
      req.destroy(reason);
      fail(reason);
    };
    function settle() {
      req.off("response", response);
      req.off("error", failed);
      res?.off("data", data);
      res?.off("end", end);
      res?.off("error", failed);
      // A request destroyed by us still reports its error: nobody needs it now.
      req.on("error", ignore);
      res?.on("error", ignore);
      signal.removeEventListener("abort", onAbort);
    }
    function fail(err: ConnectError) {
      settle();
      reject(err);
    }
    req.once("response", response);
    req.once("error", failed);
    signal.addEventListener("abort", onAbort);
    req.end(body);
  });
}

const ignore = () => {};
