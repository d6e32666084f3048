/**
 * Deleting an account with everything it holds. The confirmation is deliberate: the account's
 * email typed out and its password. The server's owner account stays (it is the one the
 * operator's commands and the first start manage); an operator removes the server instead.
 */
import type { HandlerContext } from "@connectrpc/connect";
import type {
  DeleteAccountRequest,
  DeleteAccountResponse,
} from "../../gen/herald/v1/account_service_pb.ts";
import type { Config } from "../config.ts";
import type { AccountRepository, CredentialVerifier } from "../db/index.ts";
import type { LoginLimiter } from "../domain/login-limiter.ts";
import { heraldError } from "../errors.ts";
import { confirmPassword } from "./password-auth.ts";
import { principalOf } from "./scope.ts";
import { endSession } from "./session.ts";

export async function deleteAccount(
  deps: {
    accounts: AccountRepository;
    credentials: CredentialVerifier;
    limiter: LoginLimiter;
    config: Config;
  },
  req: DeleteAccountRequest,
  ctx: HandlerContext,
): Promise<Pick<DeleteAccountResponse, "notificationsDeleted">> {
  const { accounts, config } = deps;
  const { accountId } = principalOf(ctx);
  const account = await accounts.get(accountId);
  if (!account) throw heraldError("not_found", "account not found");
  if (req.confirmEmail.trim().toLowerCase() !== account.email.toLowerCase()) {
    throw heraldError("invalid_argument", "the confirmation does not match the account", {
      violations: [{ field: "confirm_email", message: "is not this account's email" }],
    });
  }
  await confirmPassword(deps, ctx, account.email, req.password, "password");
  const owner = await accounts.owner(config.owner.email);
  if (owner?.id === accountId) {
    throw heraldError(
      "failed_precondition",
      "the server's owner account cannot be deleted; the operator removes the server instead",
    );
  }
  const deleted = await accounts.delete(accountId);
  deps.credentials.forgetAccount(accountId);
  // A console session's cookie goes with it.
  endSession(ctx);
  return { notificationsDeleted: BigInt(deleted) };
}
