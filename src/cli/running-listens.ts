/**
 * The `herald listen`s running on this machine, by device: a small file each, in `listens/`
 * beside the config file, holding its topics and its process (process-stamp.ts). A listen's file
 * goes when it ends; one that was killed is known by its process being gone (or its id now
 * another program's, started at another time), and its file is removed by the next to look.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { makeFolders } from "../data-dir.ts";
import { type Stamp, stampedAlive, thisProcess } from "../process-stamp.ts";
import { replaceWhole } from "../whole-file.ts";

/** The listens of one device on this machine, this process's among them once it `enter`s. */
export function runningListens(configPath: string, deviceId: string) {
  const dir = join(dirname(configPath), "listens");
  // The process, and this listen of it (a test runs several in one process).
  const own = join(dir, `${deviceId}.${process.pid}.${randomUUID().slice(0, 8)}.json`);
  return {
    /**
     * Records this process's listen, of `topics` (empty: every topic). Where it cannot (a full
     * disk) it listens unrecorded, as before there were records: the cursor's warning says why.
     */
    enter(topics: string[]): void {
      try {
        makeFolders(dir, 0o700);
        replaceWhole(own, `${JSON.stringify({ topics, ...thisProcess() })}\n`, 0o600);
      } catch {
        // unrecorded
      }
    },
    /** Removes its record, and the folder when it was the last. */
    leave(): void {
      rmSync(own, { force: true });
      try {
        rmdirSync(dir);
      } catch {
        // others' records are there, or it is gone already
      }
    },
    /** The topics of each listen of the device still running, this one's included. */
    live(): string[][] {
      const found: string[][] = [];
      let names: string[] = [];
      try {
        names = readdirSync(dir);
      } catch {
        return found;
      }
      for (const name of names) {
        if (!name.startsWith(`${deviceId}.`) || !name.endsWith(".json")) continue;
        const file = join(dir, name);
        const record = recordIn(file);
        if (record && running(record)) found.push(record.topics);
        else if (record) rmSync(file, { force: true });
      }
      return found;
    },
  };
}

/** A record: its topics and process; undefined when it is not (yet) one, as while it is written. */
function recordIn(file: string): (Stamp & { topics: string[] }) | undefined {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const { topics, pid, start } = r;
    if (!Array.isArray(topics) || typeof pid !== "number") return undefined;
    return { topics: topics.map(String), pid, ...(typeof start === "string" ? { start } : {}) };
  } catch {
    return undefined;
  }
}

/** Whether a record's listen runs: in this process (a test runs several), or in its own. */
const running = (r: Stamp) => r.pid === process.pid || stampedAlive(r);

/** What a device must admit for all of them: every topic if one listens for every topic. */
export function unionOf(filters: string[][]): string[] {
  if (filters.length === 0 || filters.some((f) => f.length === 0)) return [];
  return [...new Set(filters.flat())];
}
