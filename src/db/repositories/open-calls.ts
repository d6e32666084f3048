/**
 * Long-lived calls counted against the account's caps in every process: live streams (per
 * device and per account) and long polls (per account). A call holds a row while it lasts,
 * renews it (`touch`) at least every `aliveMs / 2`, and removes it when it ends; a row whose
 * process died expires after `aliveMs` and stops counting.
 */
import { uuidv7 } from "../../domain/ids.ts";
import type { LimitName } from "../../domain/limits.ts";
import type { Orm } from "../orm.ts";
import { limitExceeded, underCap } from "./caps.ts";

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

  constructor(orm: Orm, aliveMs = 90_000) {
    this.#orm = orm;
    this.#aliveMs = aliveMs;
  }

  /** Opens a call of the account (and device) under its caps, or throws limit_exceeded. */
  async open(
    kind: CallKind,
    accountId: string,
    perAccount: CallCap,
    device?: { id: string; cap: CallCap },
  ): Promise<OpenCall> {
    const id = uuidv7();
    const live = "kind = ? and alive_until > now()";
    const insert = async (em: Parameters<Parameters<typeof underCap>[2]>[0]) => {
      await em.execute(
        `insert into open_call (id, kind, account_id, device_id, alive_until)
         values (?, ?, ?, ?, now() + make_interval(secs => ?))`,
        [id, kind, accountId, device?.id ?? null, this.#aliveMs / 1000],
      );
    };
    const accountCap = {
      ...perAccount,
      scope: accountId,
      count: `select count(*) as n from open_call where account_id = ? and ${live}`,
      params: [accountId, kind],
    };
    await underCap(this.#orm, accountCap, async (em) => {
      await em.execute(`delete from open_call where account_id = ? and alive_until <= now()`, [
        accountId,
      ]);
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
    let renewed = Date.now();
    return {
      touch: () => {
        if (Date.now() - renewed < this.#aliveMs / 2) return;
        renewed = Date.now();
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
