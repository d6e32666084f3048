/**
 * Long-lived calls counted against the account's caps in every process: live streams (per
 * device and per account) and long polls (per account). A call holds a row while it lasts,
 * renews it (`touch`) at least every `aliveMs / 2`, and removes it when it ends. A row counts
 * only while its process beats (`serving_process`, every 2 s, alive 5 s): one whose process
 * died stops counting within 5 s; one whose process hangs, at `aliveMs`.
 */

import { monotonicMs } from "../../domain/clock.ts";
import { uuidv7 } from "../../domain/ids.ts";
import type { LimitName } from "../../domain/limits.ts";
import type { Orm } from "../orm.ts";
import { limitExceeded, underCap } from "../policies/caps.ts";

export type CallKind = "stream" | "long_poll";

export interface CallCap {
  limit: LimitName;
  value: number;
}

export interface OpenCall {
  /** Renews the call's row when half its life has passed; never throws. */
  touch(): void;
  close(): Promise<void>;
}

export class OpenCallRepository {
  readonly #orm: Orm;
  readonly #aliveMs: number;
  /** This process, as its calls' rows name it. */
  readonly #processId = uuidv7();
  #beating: NodeJS.Timeout | undefined;
  #lastBeat = Number.NEGATIVE_INFINITY;

  constructor(orm: Orm, aliveMs = 90_000) {
    this.#orm = orm;
    this.#aliveMs = aliveMs;
  }

  /** Says this process is alive (at most every second), and keeps saying so every 2 s. */
  async #beat(): Promise<void> {
    if (monotonicMs() - this.#lastBeat < 1_000) return;
    this.#lastBeat = monotonicMs();
    this.#beating ??= setInterval(() => {
      this.#lastBeat = Number.NEGATIVE_INFINITY;
      void this.#beat().catch(() => {}); // a missed beat only lets this process's calls lapse
    }, 2_000).unref();
    await this.#orm.em.getConnection().execute(
      `insert into serving_process (id, alive_until) values (?, now() + interval '5 seconds')
       on conflict (id) do update set alive_until = excluded.alive_until`,
      [this.#processId],
    );
  }

  /** The process stops: its calls stop counting at once. */
  async close(): Promise<void> {
    clearInterval(this.#beating);
    if (this.#lastBeat === 0 && this.#beating === undefined) return;
    await this.#orm.em
      .getConnection()
      .execute("delete from serving_process where id = ?", [this.#processId])
      .catch(() => {});
  }

  /** Opens a call of the account (and device) under its caps, or throws limit_exceeded. */
  async open(
    kind: CallKind,
    accountId: string,
    perAccount: CallCap,
    device?: { id: string; cap: CallCap },
  ): Promise<OpenCall> {
    const id = uuidv7();
    await this.#beat();
    const live = `kind = ? and alive_until > now() and exists (select 1 from serving_process p
      where p.id = open_call.process_id and p.alive_until > now())`;
    const insert = async (em: Parameters<Parameters<typeof underCap>[2]>[0]) => {
      await em.execute(
        `insert into open_call (id, kind, account_id, device_id, alive_until, process_id)
         values (?, ?, ?, ?, now() + make_interval(secs => ?), ?)`,
        [id, kind, accountId, device?.id ?? null, this.#aliveMs / 1000, this.#processId],
      );
    };
    const accountCap = {
      ...perAccount,
      scope: accountId,
      count: `select count(*) as n from open_call where account_id = ? and ${live}`,
      params: [accountId, kind],
    };
    await underCap(this.#orm, accountCap, async (em) => {
      await em.execute(
        `delete from open_call where account_id = ? and (alive_until <= now() or not exists
           (select 1 from serving_process p where p.id = open_call.process_id
              and p.alive_until > now()))`,
        [accountId],
      );
      if (!device) return insert(em);
      const [row] = await em.execute<{ n: string }[]>(
        `select count(*) as n from open_call where device_id = ? and ${live}`,
        [device.id, kind],
      );
      if (Number(row?.n ?? 0) >= device.cap.value) {
        throw limitExceeded(device.cap.limit, device.cap.value);
      }
      return insert(em);
    });
    return this.#handle(id);
  }

  #handle(id: string): OpenCall {
    const db = () => this.#orm.em.getConnection();
    let renewed = monotonicMs();
    return {
      touch: () => {
        if (monotonicMs() - renewed < this.#aliveMs / 2) return;
        renewed = monotonicMs();
        db()
          .execute(
            "update open_call set alive_until = now() + make_interval(secs => ?) where id = ?",
            [this.#aliveMs / 1000, id],
          )
          .catch(() => {}); // a missed renewal only lets the row expire early
      },
      close: async () => {
        await db()
          .execute("delete from open_call where id = ?", [id])
          .catch(() => {}); // it expires on its own
      },
    };
  }
}
