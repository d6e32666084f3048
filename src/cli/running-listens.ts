/**
 * The `herald listen`s running on this machine, by device: a small file each, in `listens/`
 * beside the config file, holding its topics. A listen's file goes when it ends; one that was
 * killed is known by its process being gone, and its file is removed by the next listen to look.
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { makeFolders } from "../data-dir.ts";
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
        replaceWhole(own, `${JSON.stringify({ topics })}\n`, 0o600);
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
        const m = /^(.+)\.(\d+)\.[0-9a-f]+\.json$/.exec(name);
        if (m?.[1] !== deviceId) continue;
        const file = join(dir, name);
        const topics = topicsIn(file);
        if (topics && running(Number(m[2]))) found.push(topics);
        else if (topics) rmSync(file, { force: true });
      }
      return found;
    },
  };
}

/** A record's topics; undefined when it is not (yet) one, as while it is being written. */
function topicsIn(file: string): string[] | undefined {
  try {
    const topics = (JSON.parse(readFileSync(file, "utf8")) as { topics?: unknown }).topics;
    return Array.isArray(topics) ? topics.map(String) : undefined;
  } catch {
    return undefined;
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** What a device must admit for all of them: every topic if one listens for every topic. */
export function unionOf(filters: string[][]): string[] {
  if (filters.length === 0 || filters.some((f) => f.length === 0)) return [];
  return [...new Set(filters.flat())];
}
