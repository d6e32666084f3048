/**
 * `GET /docs/<name>.md`: the repository's docs as text. `GET /docs/errors`: the catalogue of error codes, one anchor per code, so that a problem's
 * `type` (`/docs/errors#<code>`) leads somewhere. Built from the catalogue itself, so it never
 * disagrees with what the server sends.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { catalogue } from "../../errors.ts";
import { packageRoot } from "../../package-root.ts";

/** docs/ in Herald's folder, where there is one (a container image ships none). */
const docsDir = existsSync(join(packageRoot, "docs/api.md"))
  ? join(packageRoot, "docs")
  : undefined;

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
  // The reference the console links to (docs/api.md, Webhooks), as the repository has it.
  const markdown = docsDir ? readdirSync(docsDir).filter((f) => f.endsWith(".md")) : [];
  app.get<{ Params: { name: string } }>("/docs/:name", async (req, reply) => {
    if (!docsDir || !markdown.includes(req.params.name)) {
      return reply.code(404).type("text/plain; charset=utf-8").send("no such document\n");
    }
    return reply
      .header("content-security-policy", "default-src 'none'; frame-ancestors 'none'")
      .type("text/markdown; charset=utf-8")
      .send(readFileSync(join(docsDir, req.params.name), "utf8"));
  });
  app.get("/docs/errors", async (_req, reply) =>
    reply
      .header("content-security-policy", "default-src 'self'; frame-ancestors 'none'")
      .type("text/html; charset=utf-8")
      .send(page),
  );
}
