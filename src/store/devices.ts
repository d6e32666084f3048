/**
 * Devices and pairing codes. A device's push token is sealed with the token key ring (AES-256-GCM,
 * the device id as associated data) and indexed by an HMAC blind index: registering a token that
 * another device row holds signs that row out, so one physical device is never registered twice.
 */
import { randomInt } from "node:crypto";
import type { Orm } from "../db/orm.ts";
import { digestCredential, displayPrefix, mintCredential } from "../domain/credentials.ts";
import { uuidv7 } from "../domain/ids.ts";
import type { TokenKeyRing } from "../domain/token-crypto.ts";

export interface DeviceRow {
  id: string;
  account_id: string;
  name: string;
  platform: string;
  token_last4: string;
  topics: string[];
  enabled: boolean;
  disabled_reason: string;
  created_at: Date;
  last_seen_at: Date | null;
}

const columns =
  "id, account_id, name, platform, token_last4, topics, enabled, disabled_reason, created_at, last_seen_at";

function toRow(r: Record<string, unknown>): DeviceRow {
  const row = r as unknown as DeviceRow;
  return {
    ...row,
    created_at: new Date(r.created_at as string),
    last_seen_at: r.last_seen_at ? new Date(r.last_seen_at as string) : null,
  };
}

const pairingAlphabet = "BCDFGHJKLMNPQRSTVWXZ";
const pairingSeconds = 600;

export class DeviceStore {
  readonly #orm: Orm;
  readonly #ring: TokenKeyRing;

  constructor(orm: Orm, ring: TokenKeyRing) {
    this.#orm = orm;
    this.#ring = ring;
  }

  get #db() {
    return this.#orm.em.getConnection();
  }

  async create(
    accountId: string,
    name: string,
    platform: string,
  ): Promise<{ credential: string; device: DeviceRow }> {
    const credential = mintCredential("device");
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `insert into device (id, account_id, name, platform, credential_digest, credential_prefix)
       values (?, ?, ?, ?, ?, ?) returning ${columns}`,
      [
        uuidv7(),
        accountId,
        name,
        platform,
        digestCredential(credential),
        displayPrefix(credential),
      ],
    );
    return { credential, device: toRow(rows[0] as Record<string, unknown>) };
  }

  async get(accountId: string, id: string): Promise<DeviceRow | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${columns} from device where account_id = ? and id = ? and signed_out_at is null`,
      [accountId, id],
    );
    return rows[0] && toRow(rows[0]);
  }

  async list(accountId: string): Promise<DeviceRow[]> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `select ${columns} from device where account_id = ? and signed_out_at is null order by id desc`,
      [accountId],
    );
    return rows.map(toRow);
  }

  /** Seals and stores the device's push token; signs out any other row holding the same token. */
  async registerChannel(device: DeviceRow, token: string): Promise<DeviceRow> {
    const index = this.#ring.blindIndex(device.platform, token);
    const sealed = this.#ring.seal(token, device.id);
    return this.#orm.em.fork().transactional(async (em) => {
      await em.execute(
        `update device set signed_out_at = now(), token_box = null, token_index = null
          where token_index = ? and id <> ? and signed_out_at is null`,
        [index, device.id],
      );
      const rows = await em.execute<Record<string, unknown>[]>(
        `update device set token_key_id = ?, token_box = ?, token_index = ?, token_last4 = ?,
                enabled = true, disabled_reason = '', last_seen_at = now()
          where id = ? returning ${columns}`,
        [sealed.keyId, sealed.box, index, token.slice(-4), device.id],
      );
      return toRow(rows[0] as Record<string, unknown>);
    });
  }

  /** The plaintext push token, for a sender. */
  async pushToken(deviceId: string): Promise<string | undefined> {
    const rows = await this.#db.execute<{ token_key_id: string; token_box: Buffer }[]>(
      "select token_key_id, token_box from device where id = ? and token_box is not null",
      [deviceId],
    );
    const row = rows[0];
    return row && this.openToken(deviceId, row.token_key_id, row.token_box);
  }

  /** Decrypts a device's sealed push token read with its row (e.g. by a delivery claim). */
  openToken(deviceId: string, keyId: string, box: Buffer): string {
    return this.#ring.open({ keyId, box }, deviceId);
  }

  async setTopics(deviceId: string, topics: readonly string[]): Promise<DeviceRow> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      // As JSON: the driver layer would expand a JS array into a list of parameters.
      `update device set topics = array(select json_array_elements_text(?::json)),
              last_seen_at = now()
        where id = ? returning ${columns}`,
      [JSON.stringify(topics), deviceId],
    );
    return toRow(rows[0] as Record<string, unknown>);
  }

  async rename(accountId: string, id: string, name: string): Promise<DeviceRow | undefined> {
    const rows = await this.#db.execute<Record<string, unknown>[]>(
      `update device set name = ? where account_id = ? and id = ? and signed_out_at is null
       returning ${columns}`,
      [name, accountId, id],
    );
    return rows[0] && toRow(rows[0]);
  }

  /** Signs a device out: its credential stops working and its token is erased. */
  async signOut(accountId: string, id: string): Promise<boolean> {
    const res = await this.#db.execute<{ affectedRows: number }>(
      `update device set signed_out_at = now(), token_box = null, token_index = null,
              token_key_id = null
        where account_id = ? and id = ? and signed_out_at is null`,
      [accountId, id],
      "run",
    );
    return res.affectedRows === 1;
  }

  async createPairingCode(accountId: string): Promise<{ code: string; expiresAt: Date }> {
    let code = "";
    for (let i = 0; i < 8; i++) code += pairingAlphabet[randomInt(pairingAlphabet.length)];
    const expiresAt = new Date(Date.now() + pairingSeconds * 1000);
    await this.#db.execute(
      "insert into pairing_code (code, account_id, expires_at) values (?, ?, ?)",
      [code, accountId, expiresAt],
    );
    return { code, expiresAt };
  }

  /** Uses a pairing code up; its account, or undefined when unknown, used or expired. */
  async consumePairingCode(code: string): Promise<string | undefined> {
    const rows = await this.#db.execute<{ account_id: string }[]>(
      `update pairing_code set used_at = now()
        where code = ? and used_at is null and expires_at > now() returning account_id`,
      [code.toUpperCase().replace(/[^A-Z]/g, "")],
    );
    return rows[0]?.account_id;
  }

  /** Re-seals every token not under the newest key. Returns how many rows changed. */
  async reencryptAll(): Promise<number> {
    const current = this.#ring.current.id;
    let changed = 0;
    for (;;) {
      const rows = await this.#db.execute<
        { id: string; token_key_id: string; token_box: Buffer }[]
      >(
        `select id, token_key_id, token_box from device
          where token_box is not null and token_key_id <> ? order by id limit 500`,
        [current],
      );
      if (rows.length === 0) return changed;
      for (const r of rows) {
        const plain = this.#ring.open({ keyId: r.token_key_id, box: r.token_box }, r.id);
        const sealed = this.#ring.seal(plain, r.id);
        await this.#db.execute(
          "update device set token_key_id = ?, token_box = ? where id = ? and token_key_id = ?",
          [sealed.keyId, sealed.box, r.id, r.token_key_id],
        );
        changed++;
      }
    }
  }
}
