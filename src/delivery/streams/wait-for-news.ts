/**
 * A wait of a long-lived call (a stream, a live feed) for its next news: it ends when `wake` is
 * called, the call ends (`signal`), or `ms` pass (then `timedOut` is true: time for a keepalive
 * or a reread). Whichever ends it, it leaves no timer or abort listener behind, so a call that
 * waits again and again for hours does not pile them up on its signal.
 */
export function waitForNews(ms: number, signal: AbortSignal) {
  let wake = () => {};
  const timedOut = new Promise<boolean>((resolve) => {
    const end = (timed: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(timed);
    };
    const onAbort = () => end(false);
    const timer = setTimeout(() => end(true), signal.aborted ? 0 : ms);
    signal.addEventListener("abort", onAbort, { once: true });
    wake = () => end(false);
  });
  return { timedOut, wake };
}
