/** The senders an inbound hook takes (plain data: the console imports it too). */
export const hookKinds = [
  "github",
  "gitlab",
  "alertmanager",
  "grafana",
  "generic",
  "email",
] as const;
export type HookKind = (typeof hookKinds)[number];
