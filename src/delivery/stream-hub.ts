/**
 * Live streams of this process. Every process LISTENs on one channel; a worker's fan-out
 * statement NOTIFYs it for the notifications that reached stream devices, so the news arrives
 * when the fan-out commits (never inside a publish). Each process then hands the new deliveries
 * of the stream devices connected to it to their streams.
 */
import pg from "pg";
import type { DeliveryQueue } from "../db/queue/delivery-queue.ts";
import { announceChunk, deliveryChannel } from "../db/queue/fan-out.ts";
import type { Log } from "../domain/log.ts";

type Listener = (notificationIds: string[]) => void;

export class StreamHub {
  readonly #url: string;
  readonly #queue: DeliveryQueue;
  readonly #log: Log;
  readonly #subscribers = new Map<string, Set<Listener>>();
  #client: pg.Client | undefined;
  #closed = false;
  #reconnecting = false;
  #sweep: NodeJS.Timeout | undefined;
  readonly #ending = new AbortController();

  constructor(url: string, queue: DeliveryQueue, log: Log) {
    this.#url = url;
    this.#queue = queue;
    this.#log = log;
  }

  /**
   * LISTENs, and keeps doing so: a lost connection (a database restart) is reopened with
   * backoff until it works. NOTIFYs sent meanwhile are lost, so after a reconnect, and every
   * 30 s as a safety net, connected streams are handed whatever is still pending for them.
   */
  async start(): Promise<void> {
    await this.#connect();
    this.#sweep = setInterval(() => void this.#catchUp(5_000), 30_000).unref();
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on("notification", (msg) => void this.#dispatch(msg.payload));
    client.on("error", (err) => {
      this.#log.warn({ err }, "stream hub connection lost; reconnecting");
      if (this.#client === client) this.#client = undefined;
      client.end().catch(() => {});
      this.#reconnect();
    });
    await client.connect();
    await client.query(`listen ${deliveryChannel}`);
    this.#client = client;
  }

  #reconnect(): void {
    if (this.#closed || this.#reconnecting) return;
    this.#reconnecting = true;
    const attempt = (delayMs: number) => {
      setTimeout(async () => {
        if (this.#closed) return;
        try {
          await this.#connect();
          this.#reconnecting = false;
          this.#log.info("stream hub reconnected");
          await this.#catchUp(0);
        } catch (err) {
          this.#log.warn({ err }, "stream hub reconnect failed; trying again");
          attempt(Math.min(delayMs * 2, 10_000));
        }
      }, delayMs).unref();
    };
    attempt(1_000);
  }

  /** Hands each connected stream its deliveries still pending for at least `minAgeMs`. */
  async #catchUp(minAgeMs: number): Promise<void> {
    await this.#handEach((deviceId) => this.#queue.pendingStream(deviceId, minAgeMs));
  }

  /**
   * Tells every process (this one included) that these notifications were fanned out. A NOTIFY
   * payload is limited to 8000 bytes, so ids go in chunks that fit (a UUID costs 39 bytes).
   */
  async announce(ids: string[]): Promise<void> {
    const client = this.#client;
    if (!client) return;
    for (let i = 0; i < ids.length; i += announceChunk) {
      const chunk = JSON.stringify(ids.slice(i, i + announceChunk));
      await client.query("select pg_notify($1, $2)", [deliveryChannel, chunk]);
    }
  }

  /**
   * Aborted when the server begins to shut down: open streams end at once (their clients
   * reconnect, to another process or to this one restarted) instead of holding the shutdown
   * for its whole grace period.
   */
  /** Live streams connected to this process. */
  get streamCount(): number {
    let n = 0;
    for (const set of this.#subscribers.values()) n += set.size;
    return n;
  }

  get ending(): AbortSignal {
    return this.#ending.signal;
  }

  endStreams(): void {
    this.#ending.abort();
  }

  /** Registers a stream of a device; the callback gets the ids of its new deliveries. */
  subscribe(deviceId: string, listener: Listener): () => void {
    const set = this.#subscribers.get(deviceId) ?? new Set();
    set.add(listener);
    this.#subscribers.set(deviceId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#subscribers.delete(deviceId);
    };
  }

  async #dispatch(payload: string | undefined): Promise<void> {
    if (!payload || this.#subscribers.size === 0) return;
    const ids = JSON.parse(payload) as string[];
    await this.#handEach((deviceId) => this.#queue.streamBacklog(deviceId, { ids }));
  }

  /** For each connected device, its notification ids by `find`, handed to its streams. */
  async #handEach(find: (deviceId: string) => Promise<string[]>): Promise<void> {
    for (const [deviceId, listeners] of this.#subscribers) {
      try {
        const mine = await find(deviceId);
        if (mine.length > 0) for (const l of listeners) l(mine);
      } catch (err) {
        this.#log.warn({ err, device_id: deviceId }, "handing deliveries to a stream failed");
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    await this.#client?.end();
    this.#client = undefined;
  }
}
