/**
 * What to paste into each sender so that it calls a hook: one text per kind, for the console,
 * the CLI and docs/integrations.md alike. Without the secret (it is shown once), a placeholder.
 */
import type { HookKind } from "./kinds.ts";

export function senderSnippet(
  kind: HookKind | string,
  url: string,
  secret = "<secret>",
  address = "<address>",
): string {
  switch (kind) {
    case "email":
      return [
        `Mail to:  ${address}`,
        "  the subject is the title, the text the message; X-Priority or Importance the priority",
        `  swaks --server <smtp host>:<HERALD_SMTP_PORT> --to ${address} \\`,
        `        --header "Subject: Backup finished" --body "42 GB in 3 min"`,
      ].join("\n");
    case "github":
      return [
        "GitHub: repository (or organization) → Settings → Webhooks → Add webhook",
        `  Payload URL:   ${url}`,
        "  Content type:  application/json",
        `  Secret:        ${secret}`,
        "  Events:        Workflow runs, Deployment statuses, Releases, Check suites",
      ].join("\n");
    case "gitlab":
      return [
        "GitLab: project (or group) → Settings → Webhooks → Add new webhook",
        `  URL:           ${url}`,
        `  Secret token:  ${secret}`,
        "  Trigger:       Pipeline events, Deployment events",
      ].join("\n");
    case "alertmanager":
      return [
        "# alertmanager.yml: a receiver, and a route to it",
        "receivers:",
        "  - name: herald",
        "    webhook_configs:",
        `      - url: ${url}`,
        "        send_resolved: true",
        "        http_config:",
        "          authorization:",
        "            type: Bearer",
        `            credentials: ${secret}`,
      ].join("\n");
    case "grafana":
      return [
        "Grafana: Alerting → Contact points → Add contact point → Integration: Webhook",
        `  URL:                                 ${url}`,
        "  HTTP Method:                         POST",
        "  Authorization Header - Scheme:       Bearer",
        `  Authorization Header - Credentials:  ${secret}`,
      ].join("\n");
    default:
      return [
        `curl ${url} \\`,
        `  -H "Authorization: Bearer ${secret}" \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -d '{"title": "Backup finished", "message": "42 GB in 3 min", "priority": "normal"}'`,
      ].join("\n");
  }
}
