/**
 * Web Push encryption off the event loop for fan-outs. Sends that start together (a worker round
 * starts up to 25 between yields) are encrypted as one batch on a thread of our own
 * (web-push-thread.ts): a message's key agreement and AES cost 100-200 µs of CPU, which on the
 * loop delays every other push of the fan-out. A lone message (a single notification to a
 * browser or two) is encrypted in place, with no thread hop; the thread starts with the first
 * batch and ends after a minute without one, so an idle server holds no thread. If it fails,
 * what it held is encrypted in place, and the next batch starts another.
 */
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import type { Log } from "../../domain/log.ts";
import { encryptPayload, type Subscription } from "./web-push-request.ts";
import type { EncryptBatch, EncryptedBatch } from "./web-push-thread.ts";

/** Fewer jobs than this at once, with nothing on the thread, are encrypted in place. */
const batchFrom = 4;
/**
 * Batches on the thread at once: while it encrypts one and the next waits, new jobs queue and go
 * together when one comes back (fewer, larger messages: each hop wakes the thread).
 */
const outstanding = 2;
/** Jobs in one batch at most: the first bodies come back while the rest are encrypted. */
const perBatch = 64;
const idleMs = 60_000;

interface Pending {
  keys: Subscription["keys"];
  plaintext: string;
  resolve: (body: Buffer) => void;
  reject: (err: Error) => void;
}

/** The thread's file: beside this one in src/, or the build's entry (dist/server/src/). */
function threadFile(): string {
  if (import.meta.url.endsWith(".ts")) return join(import.meta.dirname, "web-push-thread.ts");
  const here = import.meta.dirname;
  return join(here.endsWith("chunks") ? dirname(here) : here, "web-push-thread.js");
}

function inPlace(j: Pending): void {
  try {
    j.resolve(encryptPayload(j.keys, Buffer.from(j.plaintext)));
  } catch (err) {
    j.reject(err as Error);
  }
}

/** A batch as the thread takes it: each distinct plaintext once. */
function wire(id: number, batch: Pending[]): EncryptBatch {
  const index = new Map<string, number>();
  const jobs = batch.map(({ keys, plaintext }) => {
    if (!index.has(plaintext)) index.set(plaintext, index.size);
    return { keys, plaintext: index.get(plaintext) as number };
  });
  return { id, plaintexts: [...index.keys()], jobs };
}

export class WebPushEncryptor {
  /** Messages encrypted on the thread and on the event loop, since the start. */
  readonly counts = { thread: 0, loop: 0 };
  readonly #log: Log | undefined;
  #queue: Pending[] = [];
  #flushing = false;
  #thread: Worker | undefined;
  #batches = new Map<number, Pending[]>();
  #nextId = 0;
  #idle: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(log?: Log) {
    this.#log = log;
  }

  /** The body of one message, as `encryptPayload` makes it; rejects as it throws. */
  encrypt(keys: Subscription["keys"], plaintext: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ keys, plaintext, resolve, reject });
      if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushing = false;
    const alone = this.#queue.length < batchFrom && this.#batches.size === 0;
    const thread = alone || this.#closed ? undefined : this.#start();
    if (!thread) {
      this.#inPlace(this.#queue.splice(0));
      return;
    }
    clearTimeout(this.#idle);
    while (this.#queue.length > 0 && this.#batches.size < outstanding) {
      const batch = this.#queue.splice(0, perBatch);
      const id = this.#nextId++;
      this.#batches.set(id, batch);
      thread.postMessage(wire(id, batch));
    }
  }

  #inPlace(jobs: Pending[]): void {
    this.counts.loop += jobs.length;
    for (const j of jobs) inPlace(j);
  }

  #start(): Worker | undefined {
    if (this.#thread) return this.#thread;
    let thread: Worker;
    try {
      thread = new Worker(threadFile());
    } catch (err) {
      this.#log?.warn({ err }, "Web Push's encryption thread did not start: encrypting in place");
      return undefined;
    }
    thread.unref();
    thread.on("message", (m: EncryptedBatch) => this.#done(m));
    thread.on("error", (err) => {
      this.#log?.warn({ err }, "Web Push's encryption thread failed: encrypting what it held here");
      this.#lost(thread);
    });
    thread.on("exit", () => this.#lost(thread));
    this.#thread = thread;
    this.#log?.debug({ thread: thread.threadId }, "Web Push's encryption thread started");
    return thread;
  }

  #done(m: EncryptedBatch): void {
    const batch = this.#batches.get(m.id);
    this.#batches.delete(m.id);
    this.counts.thread += batch?.length ?? 0;
    let start = 0;
    for (const [i, j] of (batch ?? []).entries()) {
      const end = m.ends[i] as number;
      if (end < 0) {
        j.reject(new Error(m.errors[i]));
        continue;
      }
      j.resolve(Buffer.from(m.bodies, start, end - start));
      start = end;
    }
    if (this.#queue.length > 0) this.#flush();
    else if (this.#batches.size === 0) {
      this.#idle = setTimeout(() => void this.#thread?.terminate(), idleMs).unref();
    }
  }

  /** The thread ended or failed: what it held is encrypted here. */
  #lost(thread: Worker): void {
    if (this.#thread !== thread) return;
    this.#thread = undefined;
    const held = [...this.#batches.values()].flat();
    this.#batches.clear();
    this.#inPlace(held);
    // What waited for room on it goes too (to a new thread, or here once closed).
    if (this.#queue.length > 0) this.#flush();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idle);
    await this.#thread?.terminate();
  }
}
