/** The benchmark's report: .bench/results.md (printed too) and .bench/results.json. */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { json, outDir, rows, smoke } from "./context.ts";
import { db } from "./infrastructure.ts";
import { targetsSection } from "./targets.ts";

export async function writeReport(): Promise<void> {
  const pgVersion = (await db.query<{ v: string }>("select current_setting('server_version') as v"))
    .rows[0]?.v;
  const machine = `${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${pgVersion}${process.env.DATABASE_URL ? " (DATABASE_URL)" : " (embedded, fsync on)"}`;
  const md = [
    `# Herald benchmark, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC${smoke ? " (smoke run: numbers meaningless)" : ""}`,
    "",
    `Machine: ${machine}. Load generator on the same machine.`,
    "",
    "| scenario | result |",
    "|---|---|",
    ...rows.map((r) => `| ${r.scenario} | ${r.result} |`),
    "",
    ...targetsSection(smoke),
  ].join("\n");
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "results.md"), md);
  writeFileSync(
    join(outDir, "results.json"),
    `${JSON.stringify({ machine, smoke, results: json }, null, 2)}\n`,
  );
  process.stdout.write(md);
}
