/**
 * Inbound hooks of a project: made under the per-project cap with a secret sealed like a
 * webhook's (bound to the row), listed, deleted, rotated (the previous secret works for 24
 * hours more), and found by id with their open secrets when a sender calls. Every statement but
 * that last names the project, so one project's credential never reaches another's hooks.
 */
import { randomBytes } from "node:crypto";
import type { HookTemplateText } from "../../domain/hooks/template.ts";
import { uuidv7 } from "../../domain/ids.ts";
import { defaultLimits } from "../../domain/limits.ts";
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import type { Orm } from "../orm.ts";
import { underCap } from "../policies/caps.ts";

export interface HookRow {
  id: string;
  project_id: string;
  kind: string;
  name: string;
  topic: string;
  template: HookTemplateText | null;
  created_at: Date;
  previous_until: Date | null;
}

/** A hook as a sender's call finds it: its account, and every secret that works now. */
export interface CalledHook extends HookRow {
  account_id: string;
  secrets: string[];
  /** Secrets sealed with a key no longer in the ring (an operator's problem: logged). */
  unopened: number;
}

const columns = "id, project_id, kind, name, topic, template, created_at, previous_until";
const base32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * A new secret: `hks_` and 26 characters of lowercase base32 (130 random bits). Lowercase, so
 * that it survives in an email address whose local part a mail system folds to lowercase.
 */
export function mintHookSecret(): string {
  const bytes = randomBytes(26);
  return `hks_${Array.from(bytes, (b) => base32[b & 31]).join("")}`;
}

export interface NewHook {
  kind: string;
  name: string;
  topic: string;
  template: HookTemplateText | null;
}

export class HookRepository {
  readonly #orm: Orm;
  readonly #keys: PushTokenKeyRing;
  readonly #max: number;

  /** `max`: hooks per project (HERALD_MAX_HOOKS). */
  constructor(orm: Orm, keys: PushTokenKeyRing, max = defaultLimits.hooksPerProject) {
    this.#orm = orm;
    this.#keys = keys;
    this.#max = max;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  async create(projectId: string, hook: NewHook): Promise<{ hook: HookRow; secret: string }> {
    const id = uuidv7();
    const secret = mintHookSecret();
    const sealed = this.#keys.seal(secret, `hook:${id}`);
    const cap = {
      limit: "hooksPerProject" as const,
      value: this.#max,
      scope: projectId,
      count: "select count(*) as n from hook where project_id = ?",
      params: [projectId],
    };
    const [row] = await underCap(this.#orm, cap, (em) =>
      em.execute<HookRow[]>(
        `insert into hook (id, project_id, kind, name, topic, template, secret_key_id, secret_box)
         values (?, ?, ?, ?, ?, ?::jsonb, ?, ?) returning ${columns}`,
        [
          id,
          projectId,
          hook.kind,
          hook.name,
          hook.topic,
          hook.template && JSON.stringify(hook.template),
          sealed.keyId,
          sealed.box,
        ],
      ),
    );
    return { hook: row as HookRow, secret };
  }

  async list(projectId: string): Promise<HookRow[]> {
    return this.#db.execute<HookRow[]>(
      `select ${columns} from hook where project_id = ? order by id desc`,
      [projectId],
    );
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const rows = await this.#db.execute<{ id: string }[]>(
      "delete from hook where project_id = ? and id = ? returning id",
      [projectId, id],
    );
    return rows.length === 1;
  }

  /** A new secret; the current one keeps working for 24 hours. */
  async rotate(projectId: string, id: string): Promise<{ hook: HookRow; secret: string } | null> {
    const secret = mintHookSecret();
    const sealed = this.#keys.seal(secret, `hook:${id}`);
    const [row] = await this.#db.execute<HookRow[]>(
      `update hook set previous_key_id = secret_key_id, previous_box = secret_box,
              previous_until = now() + interval '24 hours', secret_key_id = ?, secret_box = ?
        where project_id = ? and id = ? returning ${columns}`,
      [sealed.keyId, sealed.box, projectId, id],
    );
    return row ? { hook: row, secret } : null;
  }

  /** The hook a sender calls, with its working secrets; undefined when there is none. */
  async called(id: string): Promise<CalledHook | undefined> {
    const [row] = await this.#db.execute<
      (HookRow & {
        account_id: string;
        secret_key_id: string;
        secret_box: Buffer;
        previous_key_id: string | null;
        previous_box: Buffer | null;
        previous_live: boolean;
      })[]
    >(
      `select h.id, h.project_id, h.kind, h.name, h.topic, h.template, h.created_at,
              h.previous_until, p.account_id, h.secret_key_id, h.secret_box, h.previous_key_id,
              h.previous_box, coalesce(h.previous_until > now(), false) as previous_live
         from hook h join project p on p.id = h.project_id where h.id = ?`,
      [id],
    );
    if (!row) return undefined;
    const identity = `hook:${row.id}`;
    const sealed = [{ keyId: row.secret_key_id, box: row.secret_box }];
    if (row.previous_live && row.previous_key_id && row.previous_box) {
      sealed.push({ keyId: row.previous_key_id, box: row.previous_box });
    }
    // A secret sealed with a key no longer in the ring opens to nothing: the caller is refused.
    const secrets = sealed.flatMap((s) => {
      try {
        return [this.#keys.open(s, identity)];
      } catch {
        return [];
      }
    });
    const { secret_key_id, secret_box, previous_key_id, previous_box, previous_live, ...hook } =
      row;
    return { ...hook, secrets, unopened: sealed.length - secrets.length };
  }
}
