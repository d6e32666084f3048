/**
 * `GET /docs/errors`: the catalogue of error codes, one anchor per code, so that a problem's
 * `type` (`/docs/errors#<code>`) leads somewhere. Built from the catalogue itself, so it never
 * disagrees with what the server sends.
 */
import type { FastifyInstance } from "fastify";
import { catalogue } from "../../errors.ts";

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string,
  );

export function registerErrorDocs(app: FastifyInstance): void {
  const rows = Object.entries(catalogue)
    .map(
      ([code, e]) =>
        `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${e.status}</td><td>${escapeHtml(e.title)}</td></tr>`,
    )
    .join("\n");
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald error codes</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/assets/console.css"></head>
<body><div class="content"><h1>Herald error codes</h1>
<p>Every error carries one of these stable codes: the <code>code</code> member of a REST problem, the <code>reason</code> of a gRPC/Connect <code>google.rpc.ErrorInfo</code> (domain <code>herald.dev</code>). Branch on the code, not the message.</p>
<div class="panel"><table><thead><tr><th>code</th><th>HTTP status</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table></div></div></body></html>`;
  app.get("/docs/errors", async (_req, reply) =>
    reply
      .header("content-security-policy", "default-src 'self'; frame-ancestors 'none'")
      .type("text/html; charset=utf-8")
      .send(page),
  );
}
