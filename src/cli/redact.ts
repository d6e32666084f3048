/**
 * Removes what looks like a secret from text before it leaves the machine in a notification
 * (title, message and metadata of `herald run`): Herald credentials, common token formats,
 * bearer and basic credentials of any length, passwords in URLs, and `key=value`, `key: value`
 * or `--key value` where the key says it is secret. Errs on the side of redacting; keeps the
 * punctuation that follows a value (`token=abc; make` → `token=[redacted]; make`).
 */
const patterns: RegExp[] = [
  /\bh[kcd]_[0-9A-Za-z]{38}\b/g, // Herald
  /\bgh[pousr]_[0-9A-Za-z]{36,}\b/g, // GitHub
  /\bgithub_pat_[0-9A-Za-z_]{40,}\b/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key ids
  /\bxox[abprs]-[0-9A-Za-z-]{10,}\b/g, // Slack
  /\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}\b/g, // Stripe
  /\beyJ[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\.[0-9A-Za-z_-]{8,}\b/g, // JWTs
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g,
];
/** `Bearer x`, `Basic x`: whatever follows, however short. */
const scheme = /\b(bearer|basic)(\s+)(?!\[redacted\])[^\s;,&|"'`]+/gi;
/** `scheme://user:password@host` */
const urlPassword = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+):[^\s@/]+@/gi;
const secretName =
  "[A-Za-z0-9_.-]*(?:secret|token|passw(?:or)?d|passwd|pwd|api[_-]?key|private[_-]?key|credential|authorization)[A-Za-z0-9_.-]*";
/** `NAME=value`, `name: value`, with the value quoted or up to the next separator. */
const assignment = new RegExp(
  `\\b(${secretName})(\\s*[=:]\\s*)(?!\\[redacted\\]|(?:bearer|basic)\\s)("[^"]*"|'[^']*'|(?:token\\s+)?[^\\s;,&|"'\`]+)`,
  "gi",
);
/** `--password value`, `--api-key value` as two arguments. */
const flag = new RegExp(`(^|\\s)(--?${secretName})(\\s+)(?!-)(?!\\[redacted\\])[^\\s;,&|]+`, "gi");

export function redactSecrets(text: string): string {
  let out = text;
  for (const p of patterns) out = out.replace(p, "[redacted]");
  out = out.replace(urlPassword, "$1:[redacted]@");
  out = out.replace(scheme, "$1$2[redacted]");
  out = out.replace(assignment, "$1$2[redacted]");
  out = out.replace(flag, "$1$2$3[redacted]");
  return out;
}
