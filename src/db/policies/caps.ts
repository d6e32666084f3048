/**
 * Making something under a cap (domain/limits.ts): in one transaction, an advisory lock on the
 * capped scope (so that creations racing in any process are counted one after another), the
 * count, and the insert. At the cap: 409 `limit_exceeded`, naming the limit and its value.
 */
import { type LimitName, limitTable } from "../../domain/limits.ts";
import { heraldError } from "../../errors.ts";
import type { Orm } from "../orm.ts";

type Em = ReturnType<Orm["em"]["fork"]>;

export interface Cap {
  limit: LimitName;
  value: number;
  /** What is capped: the project's or the account's id. */
  scope: string;
  /** `select count(*) as n …` of what counts against the cap, with its parameters. */
  count: string;
  params: unknown[];
}

/** The refusal of a request past a cap. */
export function limitExceeded(limit: LimitName, value: number) {
  return heraldError(
    "limit_exceeded",
    `limit reached: at most ${value} ${limitTable[limit].what} (${limitTable[limit].env})`,
    { info: { limit, value: String(value) } },
  );
}

export async function underCap<T>(orm: Orm, cap: Cap, create: (em: Em) => Promise<T>): Promise<T> {
  return orm.em.fork().transactional(async (em) => {
    await em.execute("select pg_advisory_xact_lock(hashtext(?))", [`${cap.limit}:${cap.scope}`]);
    const [row] = await em.execute<{ n: string }[]>(cap.count, cap.params);
    if (Number(row?.n ?? 0) >= cap.value) throw limitExceeded(cap.limit, cap.value);
    return create(em);
  });
}
