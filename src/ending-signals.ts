/**
 * The signals that ask a Herald process to end, each handled so that nothing it started is left
 * running: Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT) in a terminal, a terminal closed (SIGHUP), and
 * `kill`, systemd or a container runtime's stop (SIGTERM). Node's default for each would end the
 * process at once, with no `finally` and no exit hook run.
 */
export const endingSignals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;
