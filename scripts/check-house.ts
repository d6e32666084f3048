/**
 * The house rules (docs/decisions.md, "Layout"), checked over src/ by `npm run lint` and so by
 * CI:
 * 1. transport stays in src/server/: nothing under services/, domain/, db/, delivery/, ops/,
 *    observability/ or sdk/ imports it; domain/ is pure (imports no other layer); db/ imports no use case,
 *    and the rest enters db/ through its front door, db/index.ts; services/ read no headers;
 * 2. src/config.ts alone reads the server's environment (the CLI and the SDK, client programs
 *    with their own documented variables, read theirs at their entry points);
 * 3. no file over 300 lines, no function over 60 of its own (nested functions count on their
 *    own), unless a comment right above it says why it "stays whole".
 * Prints every breach and exits 1 if there is one.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const src = join(root, "src");
const maxFileLines = 300;
const maxFunctionLines = 60;

/** Which layers each layer may not import (by top folder under src/). */
const forbidden: Record<string, string[]> = {
  services: ["server", "cli"],
  domain: ["server", "services", "db", "delivery", "ops", "cli", "sdk"],
  db: ["server", "services", "delivery", "cli", "sdk"],
  delivery: ["server", "services", "cli", "sdk"],
  ops: ["server", "services", "cli", "sdk"],
  sdk: ["server", "services", "db", "delivery", "ops", "cli"],
  // Metrics read their sources through functions handed in; only types come from db/.
  observability: ["server", "services", "delivery", "ops", "cli", "sdk"],
};
/** Files that may read `process.env`. */
const envReaders = new Set(["config.ts", "cli/main.ts", "sdk/herald.ts"]);

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Start lines of functions, methods and block-bodied callbacks, with where they end. */
function functionSpans(lines: string[]): { start: number; end: number }[] {
  const starts =
    /^(\s*)(export )?(default )?(async )?(function\b|(static |private |public |get |set )*\*?#?[A-Za-z_$][\w$]*\s*(<[^>]*>)?\(|(const|let) [\w$]+ = (async )?(\(|[\w$]+ =>|function))/;
  const spans: { start: number; end: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = starts.exec(lines[i] as string);
    if (!m || /^\s*(if|for|while|switch|catch|return)\b/.test(lines[i] as string)) continue;
    const indent = m[1] as string;
    // The header runs to the line that opens the body; a `;` first means it was no function.
    let open = -1;
    for (let j = i; j < Math.min(lines.length, i + 10); j++) {
      const l = (lines[j] as string).trimEnd();
      if (l.endsWith("{")) {
        open = j;
        break;
      }
      if (l.endsWith(";")) break;
    }
    if (open < 0) continue;
    const close = new RegExp(`^${indent}[}\\]]`);
    for (let j = open + 1; j < lines.length; j++) {
      if (close.test(lines[j] as string)) {
        spans.push({ start: i, end: j });
        break;
      }
    }
  }
  return spans;
}

/** Functions longer than the rule allows, of one file. */
function longFunctions(rel: string, lines: string[]): string[] {
  const found: string[] = [];
  const spans = functionSpans(lines);
  for (const { start, end } of spans) {
    // A function's own lines: nested functions (a factory's methods) are counted on their own.
    let inner = 0;
    let reach = start;
    for (const s of spans) {
      if (s.start > reach && s.end < end) {
        inner += s.end - s.start + 1;
        reach = s.end;
      }
    }
    const length = end - start + 1 - inner;
    const above = lines.slice(Math.max(0, start - 6), start).join("\n");
    if (length > maxFunctionLines && !/stays whole/i.test(above))
      found.push(
        `${rel}:${start + 1}: a function of ${length} lines (at most ${maxFunctionLines})`,
      );
  }
  return found;
}

const breaches: string[] = [];
// The console and the scripts are held to the same lengths.
for (const dir of ["web/src", "scripts"]) {
  for (const file of files(join(root, dir))) {
    const lines = readFileSync(file, "utf8").split("\n");
    const rel = relative(root, file);
    if (lines.length - 1 > maxFileLines)
      breaches.push(`${rel}: ${lines.length - 1} lines (at most ${maxFileLines})`);
    breaches.push(...longFunctions(rel, lines));
  }
}
for (const file of files(src)) {
  const rel = relative(src, file);
  const text = readFileSync(file, "utf8");
  const lines = text.split("\n");
  const layer = rel.includes("/") ? (rel.split("/")[0] as string) : "";
  for (const m of text.matchAll(/^import[^;]*?from "(\.[^"]+)"/gms)) {
    const target = relative(src, resolve(dirname(file), m[1] as string));
    const targetLayer = target.includes("/") ? target.split("/")[0] : "";
    if (targetLayer && forbidden[layer]?.includes(targetLayer))
      breaches.push(`${rel}: imports ${target} (${layer}/ must not import ${targetLayer}/)`);
    if (targetLayer === "db" && layer !== "db" && target !== "db/index.ts")
      breaches.push(`${rel}: imports ${target} (the persistence wing's door is db/index.ts)`);
  }
  // Use cases read the typed call context (services/context.ts), never the protocol's headers.
  if (layer === "services" && /\.(requestHeader|responseHeader|responseTrailer)\b/.test(text))
    breaches.push(
      `${rel}: reads or sets headers (use cases take callKey and return typed outcomes)`,
    );
  if (/process\.env\b/.test(text) && !envReaders.has(rel))
    breaches.push(`${rel}: reads process.env (configuration is read in src/config.ts)`);
  if (lines.length - 1 > maxFileLines)
    breaches.push(`${rel}: ${lines.length - 1} lines (at most ${maxFileLines})`);
  breaches.push(...longFunctions(rel, lines));
}
if (breaches.length > 0) {
  process.stderr.write(
    `The house rules are broken:\n${breaches.map((b) => `  ${b}`).join("\n")}\n`,
  );
  process.exit(1);
}
process.stdout.write("house rules: ok\n");
