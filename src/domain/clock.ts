/**
 * Milliseconds that only go forward, for how long ago something happened in this process: a
 * cache entry's age, a rate bucket's refill, a call's deadline, a periodic job's interval.
 * `Date.now()` is the wall clock, which NTP, a resumed virtual machine or a person may step
 * back or forward by minutes or hours while Herald runs. Stepped back an hour, every time since
 * measured with it was negative for that hour: the rate limits refused every busy key, the
 * delivery worker's periodic jobs (scheduled notifications, repeats, escalations) stopped, and
 * cached credentials outlived their revocation. The wall clock stays for what is stored or
 * compared with stored times (`created_at`, `expires_at`, a token's `exp`).
 */
export function monotonicMs(): number {
  return performance.now();
}
