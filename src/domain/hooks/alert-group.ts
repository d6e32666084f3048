/**
 * An alert group, as Prometheus Alertmanager's webhook receiver (version 4) and Grafana's
 * unified-alerting webhook contact point (which extends it) send it: one notification per group.
 *
 * - The title names the status, the count and the alert name: `[FIRING:2] HighLatency`.
 * - The message holds each alert's summary (or description, or name), one per line.
 * - Firing is high, unless a `severity` label says otherwise (warning: normal; info: low);
 *   resolved is normal.
 * - `click_url`: Alertmanager's external URL; for Grafana, the alert's panel, dashboard or rule
 *   first.
 * - A sender's retry sends once: the idempotency comes from the group key, the status and the
 *   alerts (fingerprint, status, start), so a group that changes is a new notification.
 */
import { createHash } from "node:crypto";
import {
  clip,
  type HookCall,
  type HookOutcome,
  HookPayloadError,
  type Json,
  link,
  objectBody,
  type Priority,
  text,
} from "./event.ts";

const severities: Record<string, Priority> = {
  critical: "high",
  page: "high",
  error: "high",
  high: "high",
  emergency: "high",
  alert: "high",
  warning: "normal",
  warn: "normal",
  medium: "normal",
  info: "low",
  informational: "low",
  notice: "low",
  low: "low",
  none: "low",
};

const rank: Record<Priority, number> = { low: 0, normal: 1, high: 2 };

/** Firing: the highest severity among the alerts (no or unknown severity: high). */
function firingPriority(body: Json, alerts: Json[]): Priority {
  const common = text(body, "commonLabels.severity").toLowerCase();
  const labels = common ? [common] : alerts.map((a) => text(a, "labels.severity").toLowerCase());
  let found: Priority | undefined;
  for (const label of labels) {
    const p = severities[label] ?? "high";
    if (!found || rank[p] > rank[found]) found = p;
  }
  return found ?? "high";
}

function alertsOf(body: Json): Json[] {
  const alerts = body.alerts;
  if (!Array.isArray(alerts)) throw new HookPayloadError("alerts", "must be an array");
  for (const [i, a] of alerts.entries()) {
    if (a === null || typeof a !== "object" || Array.isArray(a)) {
      throw new HookPayloadError(`alerts[${i}]`, "must be an object");
    }
  }
  return alerts as Json[];
}

/** What makes a resend of the same group the same publish. */
function dedupeOf(body: Json, status: string, alerts: Json[]): string {
  const each = alerts
    .map((a) => {
      const id = text(a, "fingerprint") || JSON.stringify(a.labels ?? {});
      return `${id}/${text(a, "status")}/${text(a, "startsAt")}`;
    })
    .sort();
  const digest = createHash("sha256").update(JSON.stringify(each)).digest("base64url");
  return `${text(body, "groupKey")}|${status}|${digest}`;
}

/** The alert names of the group, the common one first. */
function nameOf(body: Json, alerts: Json[]): string {
  const common = text(body, "commonLabels.alertname") || text(body, "groupLabels.alertname");
  if (common) return common;
  const names = [...new Set(alerts.map((a) => text(a, "labels.alertname")).filter(Boolean))];
  return names.join(", ") || text(body, "receiver") || "alerts";
}

function read(call: HookCall, grafana: boolean): HookOutcome {
  const body = objectBody(call.body);
  const status = text(body, "status");
  if (status !== "firing" && status !== "resolved") {
    throw new HookPayloadError("status", 'must be "firing" or "resolved"');
  }
  const alerts = alertsOf(body);
  const shown = alerts.filter((a) => text(a, "status") === status);
  const listed = shown.length > 0 ? shown : alerts;
  const truncated = Number(body.truncatedAlerts ?? 0) || 0;
  const count = listed.length + truncated;
  const lines = listed.map((a) => {
    const said =
      text(a, "annotations.summary") ||
      text(a, "annotations.description") ||
      text(a, "labels.alertname");
    return `• ${said}`;
  });
  if (truncated > 0) lines.push(`… and ${truncated} more`);
  const first = listed[0];
  const own =
    grafana && first
      ? (link(text(first, "panelURL")) ??
        link(text(first, "dashboardURL")) ??
        link(text(first, "generatorURL")))
      : undefined;
  return {
    publish: {
      title: clip(`[${status.toUpperCase()}:${count}] ${nameOf(body, listed)}`, "title"),
      message: clip(lines.join("\n"), "message"),
      priority: status === "resolved" ? "normal" : firingPriority(body, listed),
      clickUrl: own ?? link(text(body, "externalURL")),
      dedupe: dedupeOf(body, status, alerts),
    },
  };
}

export const readAlertmanager = (call: HookCall): HookOutcome => read(call, false);
export const readGrafana = (call: HookCall): HookOutcome => read(call, true);
