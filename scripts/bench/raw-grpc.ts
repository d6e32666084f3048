/**
 * A minimal gRPC unary caller over one Node HTTP/2 session, for measuring the server's gRPC path
 * without the generated client's own CPU cost (Connect's client pipeline runs on the same two
 * cores as the server): it writes one envelope and reads the answer's trailers, nothing more.
 */
import http2 from "node:http2";

export function rawGrpcCaller(baseUrl: string, path: string, headers: Record<string, string>) {
  const session = http2.connect(baseUrl);
  session.unref();
  return {
    call(message: Uint8Array): Promise<void> {
      const frame = Buffer.alloc(5 + message.length);
      frame.writeUInt32BE(message.length, 1);
      frame.set(message, 5);
      return new Promise((resolve, reject) => {
        const req = session.request({
          ":method": "POST",
          ":path": path,
          "content-type": "application/grpc",
          te: "trailers",
          ...headers,
        });
        let status: string | undefined;
        req.on("response", (h) => {
          status = h["grpc-status"] as string | undefined; // a trailers-only answer
        });
        req.on("trailers", (t) => {
          status = t["grpc-status"] as string | undefined;
        });
        req.on("data", () => {});
        req.on("end", () =>
          status === "0" ? resolve() : reject(new Error(`grpc-status ${status}`)),
        );
        req.on("error", reject);
        req.end(frame);
      });
    },
    close: () => session.close(),
  };
}
