/**
 * The one password check: refused while the login limiter says so, argon2 verification (with
 * equal work for unknown emails), and failures counted per account and per client address.
 * Used by password login and by device sign-in.
 */
import type { HandlerContext } from "@connectrpc/connect";
import type { AccountRepository, AccountRow } from "../db/index.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { verifyPassword } from "../domain/passwords.ts";
import { heraldError, publicError } from "../errors.ts";
import { clientAddressKey } from "./context.ts";

export async function authenticatePassword(
  deps: { accounts: AccountRepository; limiter: LoginLimiter },
  ctx: HandlerContext,
  email: string,
  password: string,
): Promise<AccountRow> {
  const address = ctx.values.get(clientAddressKey);
  const wait = await deps.limiter.blocked(email, address);
  if (wait !== undefined) throw throttled(wait, "too many failed logins; wait before trying again");
  const account = await deps.accounts.findByEmail(email);
  if (!(await verifyPassword(account?.passwordHash ?? null, password)) || !account) {
    await deps.limiter.failed(email, address);
    throw heraldError("unauthenticated", "wrong email or password");
  }
  return account;
}

/** 429 while a client address (or an account's logins) is throttled. */
export function throttled(seconds: number, detail: string) {
  return heraldError("rate_limited", detail, {
    retryAfterSeconds: seconds,
    metadata: { "retry-after": String(seconds) },
  });
}

/** 429 while the caller's address is throttled for failed authentications. */
export const addressThrottled = (seconds: number) =>
  throttled(seconds, "too many failed authentications from this address");

/**
 * Checks a one-time code (a pairing code, a device login's codes) as a failed authentication
 * would be: refused while the caller's address is throttled, and counted when it is wrong.
 */
export async function checkCode<T>(
  limiter: LoginLimiter,
  ctx: HandlerContext,
  check: () => Promise<T>,
  wrong: (result: T) => boolean,
): Promise<T> {
  const address = ctx.values.get(clientAddressKey);
  const wait = limiter.addresses.blockedFor(address);
  if (wait !== undefined) throw addressThrottled(wait);
  const result = await check();
  if (wrong(result)) await limiter.addresses.failed(address);
  return result;
}

/**
 * Re-checks the signed-in caller's password before a sensitive change (password change, account
 * deletion): a wrong one is said of its field; a login throttle or a failure stays what it is.
 */
export async function confirmPassword(
  deps: { accounts: AccountRepository; limiter: LoginLimiter },
  ctx: HandlerContext,
  email: string,
  password: string,
  field: string,
): Promise<void> {
  await authenticatePassword(deps, ctx, email, password).catch((err: unknown) => {
    if (publicError(err).code !== "unauthenticated") throw err;
    throw heraldError("permission_denied", "the password is wrong", {
      violations: [{ field, message: "is not the account's password" }],
    });
  });
}
