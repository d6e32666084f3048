/**
 * The serving processes of a supervisor: a fixed number of slots, each running one process
 * (sharing the port as supervisor/port.ts says). A process that dies at any moment, starting,
 * serving or draining, is replaced, and its death is logged with its exit code or signal.
 *
 * Replacements back off when a slot keeps dying young (before it served, or within
 * `youngMs` of it): the first replacement starts at once, the next after 0.5 s, doubling to
 * 30 s, but never more than 1 s after a death by a signal or while no other process serves
 * (domain/restart-backoff.ts); a process that served longer clears its slot's record.
 * A process that fails to start for a reason it reports (a key file it cannot read, a setting
 * the database refuses) `giveUpAfter` times in a row for the same reason ends the pool with that reason, so that the supervisor exits and
 * the process manager acts. A death by signal (SIGKILL, the OOM killer) is never such a reason.
 *
 * A serving process that stops showing signs of life for `watchdogMs` (its event loop sends a
 * heartbeat every second, heartbeatMs) is hung: it still holds its share of the port's new
 * connections and answers none. The supervisor kills it (SIGKILL) and replaces it as any that
 * died. When the supervisor's own check ran late (the machine suspended, the supervisor stopped),
 * it cannot tell, so it starts counting again. A process not serving `startTimeoutMs` after its
 * fork is stuck starting (stopped, or waiting on a connection a network dropped without a word:
 * nothing else in a start waits unbounded) and holds its slot for good: it is killed and
 * replaced the same way, its death one by signal.
 */
import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import { monotonicMs } from "../domain/clock.ts";
import { restartDelayMs } from "../domain/restart-backoff.ts";
import { shareOneSocket } from "./port.ts";

/** What a serving process tells its supervisor over IPC. */
export type ServingMessage =
  | { herald: "start-failed"; reason: string }
  | { herald: "serving" }
  | { herald: "alive" };

/** How often a serving process shows it is alive, for a watchdog of `watchdogMs` (0: never). */
export const heartbeatMs = (watchdogMs: number) => Math.min(1_000, watchdogMs / 4);

export interface PoolOptions {
  /** The file each serving process runs: main itself, not the launcher that started the supervisor. */
  exec: string;
  size: number;
  env: Record<string, string>;
  log: Logger;
  /** The serving processes' V8 old-generation limit in MB (0: V8's default). */
  heapMb: number;
  /** Told once when the pool gives up, with the reason. */
  onGiveUp: (reason: string) => void;
  /** Told when every slot serves, the first time. */
  onAllServing: () => void;
  /** A serving process silent this long is killed and replaced (0: never). */
  watchdogMs: number;
  /** A process not serving this long after its fork is killed and replaced (0: never). */
  startTimeoutMs: number;
  youngMs?: number;
  giveUpAfter?: number;
}

interface Slot {
  worker: Worker | undefined;
  /** Deaths in a row of processes that died young in this slot. */
  youngDeaths: number;
  servingSince: number | undefined;
  /** When its process last showed it is alive (serving, or a heartbeat). */
  heardAt: number;
  /** When its process was forked. */
  forkedAt: number;
  startFailure: string | undefined;
  timer: NodeJS.Timeout | undefined;
}

/**
 * A serving process's V8 heap: the old generation's limit (`heapMb`; 0 leaves V8's defaults;
 * config.ts says why 2 GB) and 16 MB semi-spaces. A publish's garbage is young; at 8 MB
 * scavenges cost gRPC ~10 % more CPU per publish (BENCHMARKS.md, issue 24). The young
 * generation shrinks back when idle. The benchmark's server takes the same flags (V8's default
 * on a big machine is 32 MB semi-spaces).
 */
export function servingHeapFlags(heapMb: number): string[] {
  return heapMb > 0 ? [`--max-semi-space-size=16`, `--max-old-space-size=${heapMb}`] : [];
}

export class ProcessPool {
  readonly #o: Required<PoolOptions>;
  readonly #slots: Slot[];
  readonly #bySlot = new Map<number, number>();
  #stopping = false;
  #announced = false;
  /** Reported start failures in a row, across slots, and their reason. */
  #failures = { reason: "", count: 0 };

  constructor(opts: PoolOptions) {
    this.#o = { youngMs: 5_000, giveUpAfter: 3, ...opts };
    this.#slots = Array.from({ length: opts.size }, () => ({
      worker: undefined,
      youngDeaths: 0,
      servingSince: undefined,
      heardAt: 0,
      forkedAt: 0,
      startFailure: undefined,
      timer: undefined,
    }));
    cluster.setupPrimary({
      exec: opts.exec,
      args: [],
      execArgv: [...process.execArgv, ...servingHeapFlags(opts.heapMb)],
    });
    shareOneSocket();
    // Told by the process itself: with a socket of its own, node:cluster hears of no listen.
    cluster.on("message", (w, msg: ServingMessage) => {
      if (msg?.herald === "start-failed") this.#slotOf(w).startFailure = msg.reason;
      else if (msg?.herald === "serving") this.#listening(w);
      else if (msg?.herald === "alive") this.#slotOf(w).heardAt = monotonicMs();
    });
    cluster.on("exit", (w, code, signal) => this.#exited(w, code, signal));
    if (opts.watchdogMs > 0 || opts.startTimeoutMs > 0) this.#watch();
  }

  #watch(): void {
    const { watchdogMs, startTimeoutMs } = this.#o;
    const every = heartbeatMs(watchdogMs || startTimeoutMs);
    let checked = monotonicMs();
    setInterval(() => {
      const now = monotonicMs();
      const late = now - checked > 2 * every + 1_000;
      checked = now;
      for (const slot of this.#slots) {
        const w = slot.worker;
        if (!w || w.isDead() || this.#stopping) continue;
        // This process was held, not (only) them: count again.
        if (late) [slot.heardAt, slot.forkedAt] = [now, now];
        const starting = slot.servingSince === undefined;
        const [since, limit] = starting
          ? [slot.forkedAt, startTimeoutMs]
          : [slot.heardAt, watchdogMs];
        if (limit === 0 || now - since < limit) continue;
        const s = Math.round((now - since) / 1000);
        this.#o.log.error(
          { worker_pid: w.process.pid, [starting ? "starting_ms" : "silent_ms"]: now - since },
          starting
            ? `a serving process did not start in ${s} s; killing it`
            : `a serving process showed no sign of life for ${s} s; killing it`,
        );
        [slot.heardAt, slot.forkedAt] = [now, now]; // once: its exit replaces it
        w.process.kill("SIGKILL");
      }
    }, every).unref();
  }

  start(): void {
    this.#slots.forEach((_, i) => {
      this.#fork(i);
    });
  }

  /** The processes alive now. */
  workers(): Worker[] {
    return this.#slots.flatMap((s) => (s.worker && !s.worker.isDead() ? [s.worker] : []));
  }

  /** Replaces no more processes from now on. */
  stopReplacing(): void {
    this.#stopping = true;
    for (const slot of this.#slots) clearTimeout(slot.timer);
  }

  #fork(i: number): void {
    const slot = this.#slots[i] as Slot;
    slot.timer = undefined;
    slot.servingSince = undefined;
    slot.startFailure = undefined;
    if (this.#stopping) return;
    const w = cluster.fork({ ...this.#o.env, HERALD_SLOT: String(i) });
    slot.forkedAt = monotonicMs();
    slot.worker = w;
    this.#bySlot.set(w.id, i);
  }

  #slotOf(w: Worker): Slot {
    return this.#slots[this.#bySlot.get(w.id) ?? -1] ?? ({} as Slot);
  }

  #listening(w: Worker): void {
    const slot = this.#slotOf(w);
    slot.servingSince = monotonicMs();
    slot.heardAt = slot.servingSince;
    this.#failures = { reason: "", count: 0 };
    if (!this.#announced && this.#slots.every((s) => s.servingSince !== undefined)) {
      this.#announced = true;
      this.#o.onAllServing();
    }
  }

  #exited(w: Worker, code: number | null, signal: string | null): void {
    const i = this.#bySlot.get(w.id);
    this.#bySlot.delete(w.id);
    if (i === undefined) return;
    const slot = this.#slots[i] as Slot;
    if (slot.worker !== w) return;
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    const phase = this.#stopping ? "draining" : slot.servingSince ? "serving" : "starting";
    const fields = { worker_pid: w.process.pid, code, signal, phase };
    if (this.#stopping) {
      this.#o.log.info(fields, `a serving process ended (${how})`);
      return;
    }
    const young =
      slot.servingSince === undefined || monotonicMs() - slot.servingSince < this.#o.youngMs;
    slot.youngDeaths = young ? slot.youngDeaths + 1 : 0;
    if (!signal && slot.startFailure !== undefined && slot.servingSince === undefined) {
      const reason = slot.startFailure;
      const same = this.#failures.reason === reason;
      this.#failures = { reason, count: same ? this.#failures.count + 1 : 1 };
      if (this.#failures.count >= this.#o.giveUpAfter) {
        this.#o.log.error({ ...fields, reason }, "serving processes keep failing to start");
        this.stopReplacing();
        this.#o.onGiveUp(reason);
        return;
      }
    }
    const othersServing = this.#slots.some(
      (s) => s !== slot && s.servingSince !== undefined && s.worker && !s.worker.isDead(),
    );
    const delay = restartDelayMs(slot.youngDeaths, { othersServing, bySignal: signal !== null });
    const why = slot.startFailure ? `: ${slot.startFailure}` : "";
    this.#o.log.warn(
      { ...fields, restart_in_ms: delay },
      `a serving process died while ${phase} (${how})${why}; starting another${delay ? ` in ${delay / 1000} s` : ""}`,
    );
    slot.timer = setTimeout(() => this.#fork(i), delay);
  }
}
