/**
 * What a running Node process promotes, by where it was allocated: a sampling heap profile over
 * the inspector (`HeapProfiler.startSampling`) that leaves out what young-generation collections
 * freed, so it keeps what survived one, whether a full collection freed it later or not. Garbage
 * that lives just long enough to be promoted costs a scavenge's copy and then a mark-compact
 * (BENCHMARKS.md, thirty-third session). Frames of the bundled server are named by its source
 * maps, as profile.ts names them. Run it while the load runs:
 *
 *   BENCH_NODE_FLAGS=--inspect=127.0.0.1:9229 …   (held-out.sh: its serving process gets 9230)
 *   node scripts/bench/promoted.ts 9230 6 [depth] [rows]
 */
import { original } from "./profile.ts";

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Samples `seconds` of the process whose inspector listens on `port`; its profile's root. */
async function sample(port: number, seconds: number): Promise<SamplingNode> {
  const [target] = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (!target) throw new Error(`nothing to inspect on port ${port}`);
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve);
    ws.addEventListener("error", reject);
  });
  const waiting = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (m.id !== undefined) waiting.get(m.id)?.(m.result);
  });
  let id = 0;
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      waiting.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await send("HeapProfiler.enable");
  await send("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const result = (await send("HeapProfiler.stopSampling")) as { profile: { head: SamplingNode } };
  ws.close();
  return result.profile.head;
}

/** Bytes by allocation site (its innermost `depth` frames), largest first, and their total. */
function bySite(head: SamplingNode, depth: number): { total: number; sites: [string, number][] } {
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode, stack: string[]) => {
    const f = original(node.callFrame);
    const at = `${f.functionName || "(anonymous)"} (${f.url.replace(/^.*node_modules\//, "")}:${f.lineNumber + 1})`;
    const here = [at, ...stack].slice(0, depth);
    if (node.selfSize > 0) {
      total += node.selfSize;
      const key = here.join(" < ");
      sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, []);
  return { total, sites: [...sites].sort((a, b) => b[1] - a[1]) };
}

if (import.meta.filename === process.argv[1]) {
  const [port = "9230", seconds = "6", depth = "1", rows = "25"] = process.argv.slice(2);
  const { total, sites } = bySite(await sample(Number(port), Number(seconds)), Number(depth));
  console.log(`promoted, sampled: ${(total / 1e6).toFixed(1)} MB in ${seconds} s`);
  for (const [site, bytes] of sites.slice(0, Number(rows))) {
    console.log(`${((bytes / total) * 100).toFixed(1).padStart(5)} %  ${site}`);
  }
}
