/**
 * RFC 8628 device logins. The device code is a secret (stored as a digest); the user code is
 * short, shown to a person, and single-use. A login is `pending` until approved or denied,
 * then `approved` until one poll collects the token (`consumed`).
 */
import { randomBytes } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import { digestCredential } from "../../domain/credentials.ts";
import { uuidv7 } from "../../domain/ids.ts";
import { mintUserCode, normalizeUserCode } from "../../domain/user-codes.ts";
import { DeviceLogin } from "../entities/device-login.ts";
import type { Orm } from "../orm.ts";

export type DeviceLoginRow = InstanceType<typeof DeviceLogin.class>;

export class DeviceLoginRepository {
  readonly #orm: Orm;

  constructor(orm: Orm) {
    this.#orm = orm;
  }

  async start(
    tokenName: string,
    lifetimeSeconds: number,
    intervalSeconds: number,
    tokenExpiresAt: Date | null = null,
    requester: { address: string; userAgent: string } = { address: "", userAgent: "" },
  ): Promise<{ deviceCode: string; login: DeviceLoginRow }> {
    const em = this.#orm.em.fork();
    const deviceCode = randomBytes(32).toString("base64url");
    const login = em.create(DeviceLogin, {
      id: uuidv7(),
      deviceCodeDigest: digestCredential(deviceCode),
      userCode: mintUserCode(),
      tokenName,
      status: "pending",
      intervalSeconds,
      expiresAt: new Date(Date.now() + lifetimeSeconds * 1000),
      tokenExpiresAt,
      requestedFrom: requester.address,
      userAgent: requester.userAgent.slice(0, 200),
      createdAt: new Date(),
    });
    await em.flush();
    return { deviceCode, login };
  }

  /**
   * Records a poll and decides its answer in one transaction (row-locked, so two polls racing
   * for an approved login cannot both collect the token).
   */
  async poll(
    deviceCode: string,
    onApproved: (accountId: string, tokenName: string, expiresAt: Date | null) => Promise<string>,
  ): Promise<{ status: string; token?: string; interval: number; unknown?: boolean }> {
    return this.#orm.em.fork().transactional(async (em) => {
      const login = await em.findOne(
        DeviceLogin,
        { deviceCodeDigest: digestCredential(deviceCode) },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      const now = Date.now();
      if (!login) return { status: "expired_token", interval: 5, unknown: true };
      if (login.status === "consumed" || login.expiresAt.getTime() <= now) {
        return { status: "expired_token", interval: login.intervalSeconds };
      }
      if (login.status === "denied")
        return { status: "access_denied", interval: login.intervalSeconds };
      const last = login.lastPolledAt?.getTime();
      login.lastPolledAt = new Date(now);
      if (login.status === "pending") {
        if (last !== undefined && now >= last && now - last < login.intervalSeconds * 1000) {
          login.intervalSeconds += 5; // RFC 8628 §3.5
          return { status: "slow_down", interval: login.intervalSeconds };
        }
        return { status: "authorization_pending", interval: login.intervalSeconds };
      }
      // approved: hand out the token exactly once
      login.status = "consumed";
      const token = await onApproved(
        login.accountId as string,
        login.tokenName,
        login.tokenExpiresAt ?? null,
      );
      return { status: "approved", token, interval: login.intervalSeconds };
    });
  }

  /** A pending login by user code, to show who is asking; null when none is pending. */
  async pending(userCode: string): Promise<DeviceLoginRow | null> {
    return this.#orm.em.fork().findOne(DeviceLogin, {
      userCode: normalizeUserCode(userCode),
      status: "pending",
      expiresAt: { $gt: new Date() },
    });
  }

  /** Approves or denies a pending login by user code; null when none is pending. */
  async decide(
    userCode: string,
    accountId: string,
    approve: boolean,
  ): Promise<DeviceLoginRow | null> {
    const em = this.#orm.em.fork();
    const login = await em.findOne(DeviceLogin, {
      userCode: normalizeUserCode(userCode),
      status: "pending",
      expiresAt: { $gt: new Date() },
    });
    if (!login) return null;
    login.status = approve ? "approved" : "denied";
    login.accountId = accountId;
    await em.flush();
    return login;
  }
}
