/**
 * The limits per account and per project (PRODUCT.md, "Per account as well"): one table, read by
 * config.ts (each from its environment variable), enforced where the thing is made or opened,
 * and listed in docs/auth.md ("Limits", held to this table by a unit test). A request over a
 * count is refused with 409 `limit_exceeded`, one over a rate with 429 `rate_limited`, each
 * naming the limit and its value.
 */
export const limitTable = {
  accountRequestBurst: {
    env: "HERALD_ACCOUNT_RATE_BURST",
    value: 120,
    what: "requests, all of an account's credentials together: bucket size",
  },
  accountRequestsPerSecond: {
    env: "HERALD_ACCOUNT_RATE_PER_SECOND",
    value: 20,
    what: "requests, all of an account's credentials together: refill per second",
  },
  apiKeysPerProject: { env: "HERALD_MAX_API_KEYS", value: 20, what: "API keys per project" },
  hooksPerProject: { env: "HERALD_MAX_HOOKS", value: 20, what: "inbound hooks per project" },
  webhooksPerProject: {
    env: "HERALD_MAX_WEBHOOKS",
    value: 10,
    what: "webhook endpoints per project",
  },
  cliTokensPerAccount: { env: "HERALD_MAX_CLI_TOKENS", value: 50, what: "CLI tokens per account" },
  devicesPerAccount: { env: "HERALD_MAX_DEVICES", value: 50, what: "devices per account" },
  scheduledPerProject: {
    env: "HERALD_MAX_SCHEDULED",
    value: 10_000,
    what: "notifications scheduled and not yet due, per project",
  },
  streamsPerDevice: {
    env: "HERALD_MAX_STREAMS_PER_DEVICE",
    value: 3,
    what: "concurrent streams per device",
  },
  streamsPerAccount: {
    env: "HERALD_MAX_STREAMS_PER_ACCOUNT",
    value: 50,
    what: "concurrent streams per account",
  },
  longPollsPerAccount: {
    env: "HERALD_MAX_LONG_POLLS",
    value: 100,
    what: "concurrent long polls (WaitForResponse, MCP ask, WatchNotifications) per account",
  },
  smtpConnectionsPerAddress: {
    env: "HERALD_SMTP_CONNECTIONS_PER_ADDRESS",
    value: 10,
    what: "SMTP connections open at once per client address, in each process (of its 100)",
  },
  failedAuthPerMinute: {
    env: "HERALD_FAILED_AUTH_PER_MINUTE",
    value: 30,
    what: "failed authentications per client address and minute, then 429 until the minute ends",
  },
  webhookDeadlineMs: {
    env: "HERALD_WEBHOOK_DEADLINE_MS",
    value: 10_000,
    what: "a webhook send, connect to last byte (milliseconds)",
  },
  webhooksInFlightPerEndpoint: {
    env: "HERALD_WEBHOOK_IN_FLIGHT_PER_ENDPOINT",
    value: 2,
    what: "webhook sends in flight per endpoint",
  },
  webhooksInFlightPerAccount: {
    env: "HERALD_WEBHOOK_IN_FLIGHT_PER_ACCOUNT",
    value: 10,
    what: "webhook sends in flight per account",
  },
  pushInFlightPerAccount: {
    env: "HERALD_PUSH_IN_FLIGHT_PER_ACCOUNT",
    value: 400,
    what: "push sends in flight per account, in each process's worker",
  },
} as const;

export type LimitName = keyof typeof limitTable;
export type Limits = Record<LimitName, number>;

/** The defaults, as PRODUCT.md sets them. */
export const defaultLimits: Limits = Object.fromEntries(
  Object.entries(limitTable).map(([name, l]) => [name, l.value]),
) as Limits;
