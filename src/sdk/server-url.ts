/**
 * Whether a server URL is whole: http:// or https:// and a host. Without its scheme
 * (`herald.example.com`) the transports failed every call as a network error; the SDK and the
 * CLI both refuse it up front, each naming where it came from.
 */
export function isServerUrl(url: string): boolean {
  return /^https?:\/\/[^/?#]/i.test(url);
}
