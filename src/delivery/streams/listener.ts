/**
 * The LISTEN connection of a process's stream hub (hub.ts): one pg client on its own, outside
 * the pool, LISTENing on the hub's channels, and the one it NOTIFYs through.
 *
 * It keeps listening: a connection lost (a database restart) is opened again with backoff, 1 s
 * doubling to 10 s, until it works, and `onBack` runs then (NOTIFYs sent meanwhile are lost: the
 * hub catches up). A start while the database is away (refusing connections, or silent) does
 * not fail: the process serves, its calls answered 503 as during any outage, and listens once it
 * can. Before, its start failed, at once or when Fastify's 10 s for onReady ran out, and three in
 * a row made the supervisor stop Herald for good (by hand: PostgreSQL held with SIGSTOP while
 * the serving processes were replaced).
 */
import pg from "pg";
import { isDatabaseUnavailable } from "../../db/index.ts";
import { monotonicMs } from "../../domain/clock.ts";
import type { OutageLog } from "../outage-log.ts";

/**
 * How long the connection may take to open, and a statement on it (its LISTEN, a NOTIFY) to be
 * answered: a silent database is then treated as one away.
 */
const listenTimeoutMs = 5_000;

export interface ListenerOptions {
  url: string;
  channels: readonly string[];
  onNotification: (channel: string, payload: string | undefined) => void;
  /**
   * Listening again after a loss or a start without the database, `awayMs` after it stopped
   * listening (or started without). Never rejects.
   */
  onBack: (awayMs: number) => Promise<void>;
  /** The hub's: a database outage said once. */
  outage: OutageLog;
}

export class Listener {
  readonly #o: ListenerOptions;
  #client: pg.Client | undefined;
  #closed = false;
  #reconnecting = false;

  constructor(opts: ListenerOptions) {
    this.#o = opts;
  }

  /** Listens now, or (the database away) from when it can. Any other failure is thrown. */
  async start(): Promise<void> {
    try {
      await this.#connect();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      this.#o.outage.failed(err, "stream hub connection failed; trying again");
      this.#reconnect();
    }
  }

  /** NOTIFYs every process (this one included) on `channel`; nothing while reconnecting. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.#client?.query("select pg_notify($1, $2)", [channel, payload]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.end();
    this.#client = undefined;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.#o.url,
      connectionTimeoutMillis: listenTimeoutMs,
      query_timeout: listenTimeoutMs,
    });
    client.on("notification", (msg) => this.#o.onNotification(msg.channel, msg.payload));
    client.on("error", (err) => {
      this.#o.outage.failed(err, "stream hub connection lost; reconnecting");
      if (this.#client === client) this.#client = undefined;
      client.end().catch(() => {});
      this.#reconnect();
    });
    try {
      await client.connect();
      await client.query(this.#o.channels.map((c) => `listen ${c}`).join("; "));
    } catch (err) {
      // Given up: whatever it says later (its end, an error) is not news.
      client.removeAllListeners("notification").removeAllListeners("error");
      client.on("error", () => {});
      client.end().catch(() => {});
      throw err;
    }
    if (this.#closed) await client.end().catch(() => {});
    else this.#client = client;
  }

  #reconnect(): void {
    if (this.#closed || this.#reconnecting) return;
    this.#reconnecting = true;
    const lostAt = monotonicMs();
    const attempt = (delayMs: number) => {
      setTimeout(async () => {
        if (this.#closed) return;
        try {
          await this.#connect();
        } catch (err) {
          this.#o.outage.failed(err, "stream hub reconnect failed; trying again");
          attempt(Math.min(delayMs * 2, 10_000));
          return;
        }
        this.#reconnecting = false;
        this.#o.outage.succeeded();
        await this.#o.onBack(monotonicMs() - lostAt);
      }, delayMs).unref();
    };
    attempt(1_000);
  }
}
