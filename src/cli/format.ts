/** How the CLI shows things and reads its positionals: timestamps, aligned tables, usage errors. */
import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import { CliError, exit } from "./context.ts";

/** A timestamp to the second, in UTC, or an em dash when there is none. */
export const when = (t?: Timestamp) =>
  t
    ? timestampDate(t)
        .toISOString()
        .replace(/\.\d+Z$/, "Z")
    : "—";

/** Rows as left-aligned columns, two spaces apart. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The positionals, when there are at least `n`; otherwise a usage error. */
export function need(positionals: string[], n: number, usage: string): string[] {
  if (positionals.length < n) throw new CliError(`usage: ${usage}`, exit.usage);
  return positionals;
}
