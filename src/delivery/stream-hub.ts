/**
 * Live streams of this process. Every process LISTENs on one channel; a worker's fan-out
 * statement NOTIFYs it for the notifications that reached stream devices, so the news arrives
 * when the fan-out commits (never inside a publish). Each process then hands the new deliveries
 * of the stream devices connected to it to their streams.
 */
import type { FastifyBaseLogger } from "fastify";
import pg from "pg";
import { announceChunk, type DeliveryStore, deliveryChannel } from "./store.ts";

type Listener = (notificationIds: string[]) => void;

export class StreamHub {
  readonly #url: string;
  readonly #store: DeliveryStore;
  readonly #log: FastifyBaseLogger;
  readonly #subscribers = new Map<string, Set<Listener>>();
  #client: pg.Client | undefined;
  #closed = false;

  constructor(url: string, store: DeliveryStore, log: FastifyBaseLogger) {
    this.#url = url;
    this.#store = store;
    this.#log = log;
  }

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url });
    client.on("notification", (msg) => void this.#dispatch(msg.payload));
    client.on("error", (err) => {
      this.#log.warn({ err }, "stream hub connection lost; reconnecting");
      this.#client = undefined;
      if (!this.#closed) setTimeout(() => void this.start().catch(() => {}), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${deliveryChannel}`);
    this.#client = client;
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

  get connectedDevices(): number {
    return this.#subscribers.size;
  }

  async #dispatch(payload: string | undefined): Promise<void> {
    if (!payload || this.#subscribers.size === 0) return;
    const ids = JSON.parse(payload) as string[];
    for (const [deviceId, listeners] of this.#subscribers) {
      try {
        const mine = await this.#store.streamBacklog(deviceId, { ids });
        if (mine.length > 0) for (const l of listeners) l(mine);
      } catch (err) {
        this.#log.warn({ err, device_id: deviceId }, "stream dispatch failed");
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.end();
    this.#client = undefined;
  }
}
