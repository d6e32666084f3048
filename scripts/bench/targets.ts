/**
 * Issue 24's targets, judged in the run that measured them. Each scenario says what it measured
 * against its target and, for a target missed, where that run's time went, from its own
 * measurements (the server's share of slow calls, its event loop and GC; CPU by owner; the
 * machine's cores). The report ends with them (report.ts), so a run shows at a glance which
 * targets it met on this machine at this hour, beside the yardstick measured in the same run.
 */

export interface Verdict {
  target: string;
  measured: string;
  met: boolean;
  /** Where the time went: that run's own measurement, for a target missed. */
  where: string;
}

export const verdicts: Verdict[] = [];

export function judge(target: string, measured: string, met: boolean, where: string): void {
  verdicts.push({ target, measured, met, where });
}

/** The targets' section of the report, in the order they were judged. */
export function targetsSection(smoke: boolean): string[] {
  if (verdicts.length === 0) return [];
  const met = verdicts.filter((v) => v.met).length;
  return [
    `## Issue 24's targets: ${met} of ${verdicts.length} met in this run${smoke ? " (smoke run: meaningless)" : ""}`,
    "",
    "| target | measured | | where the time goes, if missed |",
    "|---|---|---|---|",
    ...verdicts.map(
      (v) =>
        `| ${v.target} | ${v.measured} | ${v.met ? "met" : "**missed**"} | ${v.met ? "" : v.where} |`,
    ),
    "",
  ];
}

/** The p99 target at 500/s offered, over a protocol and client, judged from one run's p99. */
export function judgeP99(over: string, p99: number | undefined, where: string): void {
  const ms = p99 ?? Number.NaN;
  judge(`p99 ≤ 25 ms at 500/s offered, ${over}`, `${ms} ms`, ms <= 25, where);
}
