/**
 * Devices of an account. A device's push token is sealed with the push-token key ring
 * (AES-256-GCM, the device id as associated data) and indexed by an HMAC blind index:
 * registering a token that another device row holds signs that row out, so one physical device
 * is never registered twice.
 */

import { digestCredential, displayPrefix, mintCredential } from "../../domain/credentials.ts";
import { uuidv7 } from "../../domain/ids.ts";
import { defaultLimits } from "../../domain/limits.ts";
import type { PushTokenKeyRing } from "../../domain/push-token-crypto.ts";
import type { QuietHours } from "../../domain/quiet-hours.ts";
import { Device } from "../entities/device.ts";
import type { Orm } from "../orm.ts";
import { underCap } from "../policies/caps.ts";

export type DeviceRow = InstanceType<typeof Device.class>;

/** Rows re-sealed per batch by `reencryptAll`. */
const reencryptBatch = 500;

/**
 * The channel that tells every process's stream hub that a device's topics, quiet hours or
 * sign-in changed, so that its live streams there follow them. A change NOTIFYs it in its own
 * transaction: the news goes out when, and only when, it commits. Sent after the commit, as it
 * was, a process killed in between, or whose own LISTEN connection was away, left another
 * process handing a signed-out device's stream what it published.
 */
export const deviceChannel = "herald_device";

type Em = Parameters<Parameters<Orm["em"]["transactional"]>[0]>[0];

/** In `em`'s transaction: every process hears that device `id` changed, once it commits. */
async function tell(em: Em, id: string): Promise<void> {
  await em.execute("select pg_notify(?, ?)", [deviceChannel, id]);
}

export class DeviceRepository {
  readonly #orm: Orm;
  readonly #ring: PushTokenKeyRing;

  readonly #max: number;

  /** `max`: signed-in devices per account (HERALD_MAX_DEVICES). */
  constructor(orm: Orm, ring: PushTokenKeyRing, max = defaultLimits.devicesPerAccount) {
    this.#orm = orm;
    this.#ring = ring;
    this.#max = max;
  }

  async create(
    accountId: string,
    name: string,
    platform: string,
  ): Promise<{ credential: string; device: DeviceRow }> {
    const cap = {
      limit: "devicesPerAccount" as const,
      value: this.#max,
      scope: accountId,
      count: "select count(*) as n from device where account_id = ? and signed_out_at is null",
      params: [accountId],
    };
    return underCap(this.#orm, cap, async (em) => {
      const credential = mintCredential("device");
      const device = em.create(Device, {
        id: uuidv7(),
        accountId,
        name,
        platform,
        credentialDigest: digestCredential(credential),
        credentialPrefix: displayPrefix(credential),
        tokenLast4: "",
        topics: [],
        enabled: true,
        disabledReason: "",
        createdAt: new Date(),
      });
      await em.flush();
      return { credential, device };
    });
  }

  /** A signed-in device of the account. */
  async get(accountId: string, id: string): Promise<DeviceRow | null> {
    return this.#orm.em.fork().findOne(Device, { accountId, id, signedOutAt: null });
  }

  async list(accountId: string): Promise<DeviceRow[]> {
    return this.#orm.em
      .fork()
      .find(Device, { accountId, signedOutAt: null }, { orderBy: { id: "desc" } });
  }

  /**
   * Seals and stores the device's push token; signs out any other row holding the same token.
   * `last4` is what listings show of it (for Web Push, of the endpoint).
   */
  async registerChannel(
    deviceId: string,
    token: string,
    last4 = token.slice(-4),
  ): Promise<DeviceRow> {
    return this.#orm.em.fork().transactional(async (em) => {
      const device = await em.findOneOrFail(Device, { id: deviceId });
      const index = this.#ring.blindIndex(device.platform, token);
      const sealed = this.#ring.seal(token, device.id);
      await em.nativeUpdate(
        Device,
        { tokenIndex: index, id: { $ne: device.id }, signedOutAt: null },
        { signedOutAt: new Date(), tokenBox: null, tokenIndex: null },
      );
      Object.assign(device, {
        tokenKeyId: sealed.keyId,
        tokenBox: sealed.box,
        tokenIndex: index,
        tokenLast4: last4,
        enabled: true,
        disabledReason: "",
        lastSeenAt: new Date(),
      });
      return device;
    });
  }

  /**
   * Sets a device's topic filter; null when it is not the account's (or signed out). Set `byItself`,
   * the device was also seen now.
   */
  async setTopics(
    accountId: string,
    id: string,
    topics: readonly string[],
    byItself: boolean,
  ): Promise<DeviceRow | null> {
    return this.#orm.em.fork().transactional(async (em) => {
      const device = await em.findOne(Device, { accountId, id, signedOutAt: null });
      if (!device) return null;
      device.topics = [...topics];
      if (byItself) device.lastSeenAt = new Date();
      await tell(em, device.id);
      return device;
    });
  }

  async rename(accountId: string, id: string, name: string): Promise<DeviceRow | null> {
    const em = this.#orm.em.fork();
    const device = await em.findOne(Device, { accountId, id, signedOutAt: null });
    if (!device) return null;
    device.name = name;
    await em.flush();
    return device;
  }

  /** Sets (or with null clears) a device's quiet hours; null when it is not the account's. */
  async setQuietHours(
    accountId: string,
    id: string,
    q: QuietHours | null,
  ): Promise<DeviceRow | null> {
    return this.#orm.em.fork().transactional(async (em) => {
      const device = await em.findOne(Device, { accountId, id, signedOutAt: null });
      if (!device) return null;
      device.quietTz = q?.timeZone ?? null;
      device.quietStart = q?.start ?? null;
      device.quietEnd = q?.end ?? null;
      await tell(em, device.id);
      return device;
    });
  }

  /** Signs a device out: its credential stops working, its token is erased, and its streams are told. */
  async signOut(accountId: string, id: string): Promise<boolean> {
    return this.#orm.em.fork().transactional(async (em) => {
      const changed = await em.nativeUpdate(
        Device,
        { accountId, id, signedOutAt: null },
        { signedOutAt: new Date(), tokenBox: null, tokenIndex: null, tokenKeyId: null },
      );
      if (changed === 1) await tell(em, id);
      return changed === 1;
    });
  }

  /** A push service said the token is dead: no more pushes until the device registers again. */
  async disable(deviceId: string, reason: string): Promise<void> {
    await this.#orm.em
      .fork()
      .nativeUpdate(Device, { id: deviceId }, { enabled: false, disabledReason: reason });
  }

  /** Re-seals every token not under the newest key. Returns how many rows changed. */
  async reencryptAll(): Promise<number> {
    const current = this.#ring.current.id;
    let changed = 0;
    for (;;) {
      const em = this.#orm.em.fork();
      const rows = await em.find(
        Device,
        { tokenBox: { $ne: null }, tokenKeyId: { $ne: current } },
        { orderBy: { id: "asc" }, limit: reencryptBatch },
      );
      if (rows.length === 0) return changed;
      for (const r of rows) {
        const plain = this.#ring.open(
          { keyId: r.tokenKeyId as string, box: r.tokenBox as Buffer },
          r.id,
        );
        const sealed = this.#ring.seal(plain, r.id);
        // Only if still under the key it was read with (a server may re-register meanwhile).
        changed += await em.nativeUpdate(
          Device,
          { id: r.id, tokenKeyId: r.tokenKeyId },
          { tokenKeyId: sealed.keyId, tokenBox: sealed.box },
        );
      }
    }
  }
}
