/**
 * Verifies presented credentials (API keys, CLI tokens, device credentials) against their
 * stored digests. Raw SQL by the ORM rule: one indexed lookup on every request's path, no
 * entity hydration. A verified credential is cached
 * for at most `cacheMs` (≤ 1 s), which bounds how long a revocation takes to reach every server
 * process without any cross-process messaging. `last_used_at` is written at most once a minute
 * per credential, off the request path.
 */

import { monotonicMs } from "../../domain/clock.ts";
import {
  type CredentialKind,
  digestCredentialText,
  digestsEqual,
} from "../../domain/credentials.ts";
import type { Log } from "../../domain/log.ts";
import type { Principal } from "../../domain/principal.ts";
import type { Orm } from "../orm.ts";

const lastUsedIntervalMs = 60_000;

/** Not revoked, and not past its expiry if it has one. */
function valid(row: { revoked_at: unknown; expires_at: Date | string | null }): boolean {
  // Raw statements return timestamps as the driver gives them (a string here).
  const expires = row.expires_at === null ? undefined : new Date(row.expires_at).getTime();
  return row.revoked_at === null && (expires === undefined || expires > Date.now());
}

interface CacheEntry {
  principal: Principal | undefined;
  expiresMs: number;
}

export class CredentialVerifier {
  readonly #orm: Orm;
  readonly #cacheMs: number;
  readonly #log: Log;
  readonly #cache = new Map<string, CacheEntry>();
  readonly #lastUsedWritten = new Map<string, number>();
  #sweptMs = 0;
  readonly #pending = new Set<Promise<unknown>>();
  readonly #lookups = new Map<string, Promise<Principal | undefined>>();

  constructor(orm: Orm, cacheMs: number, log: Log) {
    this.#orm = orm;
    this.#cacheMs = cacheMs;
    this.#log = log;
  }

  /** The principal for a well-formed secret of the given kind, or undefined if unknown/revoked. */
  async verify(kind: CredentialKind, secret: string): Promise<Principal | undefined> {
    const cacheKey = digestCredentialText(secret);
    const now = monotonicMs();
    const cached = this.#cache.get(cacheKey);
    if (cached && cached.expiresMs > now) return cached.principal;
    // Requests that arrive together with one credential (a busy key, just after its cache entry
    // expired) share one lookup.
    let lookup = this.#lookups.get(cacheKey);
    if (!lookup) {
      const digest = Buffer.from(cacheKey, "base64");
      lookup = this.#lookup(kind, digest, cacheKey, now).finally(() =>
        this.#lookups.delete(cacheKey),
      );
      this.#lookups.set(cacheKey, lookup);
    }
    return lookup;
  }

  async #lookup(
    kind: CredentialKind,
    digest: Buffer,
    cacheKey: string,
    now: number,
  ): Promise<Principal | undefined> {
    const principal =
      kind === "apiKey"
        ? await this.#verifyApiKey(digest)
        : kind === "cliToken"
          ? await this.#verifyCliToken(digest)
          : await this.#verifyDevice(digest);
    if (this.#cacheMs > 0) {
      if (this.#cache.size > 50_000) this.#cache.clear();
      this.#cache.set(cacheKey, { principal, expiresMs: now + this.#cacheMs });
    }
    if (principal) this.#touch(principal, now);
    return principal;
  }

  async #verifyApiKey(digest: Buffer): Promise<Principal | undefined> {
    const rows = await this.#orm.em.getConnection().execute<
      {
        id: string;
        project_id: string;
        account_id: string;
        scopes: string[];
        secret_digest: Buffer;
        revoked_at: Date | null;
        expires_at: Date | null;
      }[]
    >(
      `select k.id, k.project_id, p.account_id, k.scopes, k.secret_digest, k.revoked_at,
              k.expires_at
         from api_key k join project p on p.id = k.project_id
        where k.secret_digest = ?`,
      [digest],
    );
    const row = rows[0];
    if (!row || !valid(row) || !digestsEqual(row.secret_digest, digest)) return undefined;
    return {
      kind: "apiKey",
      credentialId: row.id,
      accountId: row.account_id,
      projectId: row.project_id,
      scopes: row.scopes,
    };
  }

  async #verifyCliToken(digest: Buffer): Promise<Principal | undefined> {
    const rows = await this.#orm.em.getConnection().execute<
      {
        id: string;
        account_id: string;
        secret_digest: Buffer;
        revoked_at: Date | null;
        expires_at: Date | null;
      }[]
    >(
      "select id, account_id, secret_digest, revoked_at, expires_at from cli_token where secret_digest = ?",
      [digest],
    );
    const row = rows[0];
    if (!row || !valid(row) || !digestsEqual(row.secret_digest, digest)) return undefined;
    return { kind: "cliToken", credentialId: row.id, accountId: row.account_id };
  }

  async #verifyDevice(digest: Buffer): Promise<Principal | undefined> {
    const rows = await this.#orm.em
      .getConnection()
      .execute<
        { id: string; account_id: string; credential_digest: Buffer; signed_out_at: Date | null }[]
      >(
        "select id, account_id, credential_digest, signed_out_at from device where credential_digest = ?",
        [digest],
      );
    const row = rows[0];
    if (!row || row.signed_out_at !== null || !digestsEqual(row.credential_digest, digest)) {
      return undefined;
    }
    return { kind: "device", credentialId: row.id, accountId: row.account_id };
  }

  #touch(principal: Principal, now: number): void {
    const id = principal.credentialId;
    const table = { apiKey: "api_key", cliToken: "cli_token", device: "device" }[principal.kind];
    const column = principal.kind === "device" ? "last_seen_at" : "last_used_at";
    const last = this.#lastUsedWritten.get(id);
    if (last !== undefined && now - last < lastUsedIntervalMs) return;
    if (this.#lastUsedWritten.size >= 10_000 && now - this.#sweptMs >= lastUsedIntervalMs) {
      this.#sweptMs = now;
      this.#forgetWritesBefore(now - lastUsedIntervalMs);
    }
    this.#lastUsedWritten.set(id, now);
    const write = this.#orm.em
      .getConnection()
      .execute(
        `update ${table} set ${column} = now()
          where id = ? and (${column} is null or ${column} < now() - interval '1 minute')`,
        [id],
      )
      .catch((err: unknown) => this.#log.warn({ err, credential_id: id }, "last_used_at write"))
      .finally(() => this.#pending.delete(write));
    this.#pending.add(write);
  }

  /**
   * Lets go of the writes a minute old or older: they no longer hold a write back, and every
   * credential ever used would otherwise stay here for the life of the process.
   */
  #forgetWritesBefore(cutoff: number): void {
    for (const [id, at] of this.#lastUsedWritten)
      if (at <= cutoff) this.#lastUsedWritten.delete(id);
  }

  /** Drops a revoked credential from this process's cache at once (other processes: ≤ cacheMs). */
  forget(credentialId: string): void {
    for (const [key, entry] of this.#cache) {
      if (entry.principal?.credentialId === credentialId) this.#cache.delete(key);
    }
  }

  /** Drops every cached principal of the account (it was just deleted). */
  forgetAccount(accountId: string): void {
    for (const [key, entry] of this.#cache) {
      if (entry.principal?.accountId === accountId) this.#cache.delete(key);
    }
  }

  /** Waits for background writes; called on shutdown before the database closes. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}
