/**
 * The top of a V8 CPU profile (.cpuprofile, from --cpu-prof): self time by function, and by
 * package (node_modules/<name>, Herald's own code, Node's internals, GC, idle). A function of
 * the bundled server (dist/server*) is named by its source map: the file, line and name it was
 * written with, and the package it came from (the bundle holds its dependencies too). Read it
 * while the build it profiled is still there.
 *
 *   node scripts/bench/profile.ts .bench/cpu-rest.cpuprofile
 */
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: its package, Herald, Node, or V8's own (GC, idle, program). */
export function ownerOf(url: string, name: string): string {
  if (url === "") return `(${name.replace(/[()]/g, "")})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (url.startsWith("node:")) return "node";
  if (/\/(dist\/server[^/]*|src|gen)\//.test(url)) return "herald";
  return "other";
}

const maps = new Map<string, SourceMap | undefined>();
/** The source map beside a bundled file (`<file>.map`), or undefined. */
function mapOf(url: string): SourceMap | undefined {
  if (!maps.has(url)) {
    const file = url.startsWith("file:") ? `${fileURLToPath(url)}.map` : undefined;
    maps.set(
      url,
      file && existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, "utf8"))) : undefined,
    );
  }
  return maps.get(url);
}

/** A frame of the bundle as it was written (source path, line, name); others as they are. */
export function original(f: CallFrame): { functionName: string; url: string; lineNumber: number } {
  const entry = mapOf(f.url)?.findEntry(f.lineNumber, f.columnNumber) as
    | { originalSource?: string; originalLine: number; name?: string }
    | undefined;
  if (!entry?.originalSource) return f;
  const source = entry.originalSource.replace(/^(\.\.\/)+/, "");
  return {
    functionName: entry.name ?? f.functionName,
    url: source.includes("node_modules/") ? source : `/${source}`,
    lineNumber: entry.originalLine,
  };
}

/** Self time by function and by owner, each as [name, share of all samples], largest first. */
export function shares(file: string) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((node) => [node.id, node]));
  const self = new Map<number, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const [id, t] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const f = original(frame);
    const owner = ownerOf(f.url, f.functionName);
    const file = f.url.replace(/^.*\/(src|gen)\//, "$1/").replace(/^.*node_modules\//, "");
    const key = `${f.functionName || "(anonymous)"}  (${owner === "herald" ? file : owner}${f.url ? `:${f.lineNumber + 1}` : ""})`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + t);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + t);
  }
  const sorted = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([k, t]) => [k, t / total] as const);
  return { byOwner: sorted(byOwner), byFunction: sorted(byFunction) };
}

/** The top `n` of each, as lines: "  12.3 %  name  (owner)". */
export function topFunctions(file: string, n: number): string {
  const { byOwner, byFunction } = shares(file);
  const lines = (rows: (readonly [string, number])[]) =>
    rows
      .slice(0, n)
      .map(([k, share]) => `      ${(share * 100).toFixed(1).padStart(5)} %  ${k}`)
      .join("\n");
  return `    by owner:\n${lines(byOwner)}\n    by function:\n${lines(byFunction)}`;
}

if (import.meta.filename === process.argv[1]) {
  process.stdout.write(
    `${topFunctions(process.argv[2] as string, Number(process.argv[3] ?? 25))}\n`,
  );
}
