/**
 * Passwords are hashed with argon2id (OWASP parameters: 19 MiB, 2 passes, 1 lane). Verifying an
 * unknown account still spends the same work on a dummy hash, so response time does not tell
 * whether an email has an account.
 */
import { hash, verify } from "@node-rs/argon2";

const params = { algorithm: 2 /* argon2id */, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return hash(password, params);
}

let dummy: Promise<string> | undefined;

/** True when `password` matches `stored`; with no stored hash, burns equal time and fails. */
export async function verifyPassword(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    dummy ??= hashPassword("not a password of anyone's");
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
