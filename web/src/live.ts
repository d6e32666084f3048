/**
 * A page's live streams of one kind, each kept while its server is heard from
 * (src/domain/stream-silence.ts). One that a network dropped without closing it (a laptop's
 * sleep, a changed network) would say nothing, for good, and the page would go on showing what it
 * last heard as live. Not heard from for about twice the interval its messages say, it ends with
 * an Unavailable error that says how long the server was silent, as a broken connection ends,
 * and the page opens it again.
 */
import { type Duration, durationMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { silenceWatch } from "../../src/domain/stream-silence.ts";

export function whileHeard<T>(intervalOf: (msg: T) => Duration | undefined) {
  const heardFrom = silenceWatch<T>((msg) => {
    const interval = intervalOf(msg);
    return interval && durationMs(interval);
  });
  /** The stream `open` calls with its signal, ended by `signal` or by its server's silence. */
  return (open: (signal: AbortSignal) => AsyncIterable<T>, signal?: AbortSignal) => {
    const silence = new AbortController();
    const call = signal ? AbortSignal.any([signal, silence.signal]) : silence.signal;
    const silent = (why: string) => silence.abort(new ConnectError(why, Code.Unavailable));
    return heardFrom(open(call), silent);
  };
}
