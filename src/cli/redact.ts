/**
 * Removes what looks like a secret from text before it leaves the machine in a notification:
 * Herald credentials, common token formats, bearer values, and `key=value` pairs whose key says
 * it is secret. Errs on the side of redacting.
 */
const patterns: RegExp[] = [
  /\bh[kcd]_[0-9A-Za-z]{38}\b/g, // Herald
  /\bgh[pousr]_[0-9A-Za-z]{36,}\b/g, // GitHub
  /\bgithub_pat_[0-9A-Za-z_]{40,}\b/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bxox[abprs]-[0-9A-Za-z-]{10,}\b/g, // Slack
  /\bsk_(?:live|test)_[0-9A-Za-z]{16,}\b/g, // Stripe
  /\beyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\b/g, // JWTs
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
const bearer = /\b(bearer|basic)\s+[0-9A-Za-z._~+/=-]{8,}/gi;
const assignment =
  /\b([A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|api[_-]?key|private[_-]?key|credential)[A-Za-z0-9_.-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi;

export function redactSecrets(text: string): string {
  let out = text;
  for (const p of patterns) out = out.replace(p, "[redacted]");
  out = out.replace(bearer, "$1 [redacted]");
  out = out.replace(assignment, "$1$2[redacted]");
  return out;
}
