/**
 * The web console, on the same port: the built files of web/ (npm run build:web, done by npm
 * install), the page itself for each of the console's paths, and the headers that keep it
 * safe: a Content-Security-Policy with no inline script, no framing, no referrer.
 */
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";
import { packageRoot } from "../../package-root.ts";

/** The console's build: web/dist in Herald's folder. */
export const consoleDir = join(packageRoot, "web/dist");

/** The console's own paths: each answers the page, which routes in the browser. */
const pages = [
  "/",
  "/setup",
  "/signin",
  "/signup",
  "/device",
  "/pair",
  "/notifications",
  "/devices",
  "/keys",
  "/webhooks",
  "/hooks",
  "/projects",
  "/account",
];

const files: Record<string, string> = {
  "/sw.js": "sw.js",
  "/manifest.webmanifest": "manifest.webmanifest",
  "/icon.svg": "icon.svg",
  "/icon-192.png": "icon-192.png",
  "/icon-512.png": "icon-512.png",
  "/assets/console.js": "assets/console.js",
  "/assets/console.css": "assets/console.css",
};

const types: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

const csp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self'",
  "manifest-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", csp)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("x-frame-options", "DENY");
}

export function registerConsole(app: FastifyInstance): void {
  const built = existsSync(join(consoleDir, "index.html"));
  // Read once: the console is a handful of small files.
  const cache = new Map<string, Buffer>();
  const read = (name: string) => {
    let body = cache.get(name);
    if (!body) {
      body = readFileSync(join(consoleDir, name));
      cache.set(name, body);
    }
    return body;
  };
  for (const path of pages) {
    app.get(path, async (_req, reply) => {
      secure(reply)
        .header("cache-control", "no-cache")
        .type(types[".html"] as string);
      if (!built) {
        return reply.send(
          "<!doctype html><title>Herald</title><p>The console is not built: run <code>npm run build:web</code> (npm install does it).</p>",
        );
      }
      return reply.send(read("index.html"));
    });
  }
  for (const [path, name] of Object.entries(files)) {
    app.get(path, async (_req, reply) => {
      if (!built) return reply.code(404).send();
      secure(reply)
        .header("cache-control", path === "/sw.js" ? "no-cache" : "public, max-age=300")
        .type(types[extname(name)] ?? "application/octet-stream");
      return reply.send(read(name));
    });
  }
}
