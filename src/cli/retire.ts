/**
 * What a login leaves on this machine when it ends (`herald logout`) or is replaced (`herald
 * login` again): its CLI token and the stream device `herald listen` registered with it. The CLI
 * forgets both then, and a credential nobody holds any more is ended on the server too: before,
 * a machine logged out, or logged in to another account, went on receiving the first account's
 * notifications in `herald listen`, and every login left one more live token of the same name.
 *
 * Ending them is best effort: a server that is gone, or a credential already revoked, does not
 * stop the logout or the login; the line printed says what could not be ended.
 */
import { AuthService } from "../../gen/herald/v1/auth_service_pb.ts";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { HeraldError } from "../sdk/errors.ts";
import type { Context, SavedConfig } from "./context.ts";
import { loginDevices, savedDevices } from "./saved-devices.ts";

/** Who a saved login is: its server and account. */
export interface LoginOwner {
  url: string;
  accountId?: string;
  email?: string;
}

/** A saved login and a new one are the same account on the same server. */
export function sameLogin(saved: SavedConfig, next: LoginOwner): boolean {
  if (saved.url !== next.url) return false;
  if (saved.accountId && next.accountId) return saved.accountId === next.accountId;
  return saved.email !== undefined && saved.email === next.email;
}

/** Ends one credential; says why it could not, or nothing when it is ended (or was already). */
async function end(call: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await call();
    return undefined;
  } catch (err) {
    const e = HeraldError.from(err);
    return e.code === "unauthenticated" ? undefined : e.message;
  }
}

/**
 * Signs out the saved stream device and revokes the saved token (each when asked and present),
 * at the server they were made at. Returns the words for what was ended, and for what was not.
 */
export async function retire(
  ctx: Context,
  saved: SavedConfig,
  what: { device: boolean; token: boolean },
): Promise<{ ended: string[]; failed: string[] }> {
  const url = saved.url ?? ctx.url;
  const ended: string[] = [];
  const failed: string[] = [];
  // A server gone without a word (its host dropping packets) holds the login up 5 s at most.
  const bearer = (secret: string) => ({
    headers: { authorization: `Bearer ${secret}` },
    timeoutMs: 5_000,
  });
  const { token } = saved;
  const whose = saved.email ? ` (${saved.email}'s)` : "";
  const devices = what.device ? savedDevices(saved, ctx.url).filter(loginDevices(saved, url)) : [];
  for (const device of devices) {
    const why = await end(() =>
      ctx.client(DeviceService, device.url).signOutDevice({}, bearer(device.credential)),
    );
    const it = `this machine's stream device ${device.id}${whose}`;
    if (why) failed.push(`could not sign out ${it}: ${why}`);
    else ended.push(`signed out ${it}`);
  }
  if (what.token && token) {
    const why = await end(() => ctx.client(AuthService, url).logout({}, bearer(token)));
    const it = `this machine's previous token ${token.slice(0, 7)}…${whose}`;
    if (why) failed.push(`could not revoke ${it}: ${why}`);
    else ended.push(`revoked ${it}`);
  }
  return { ended, failed };
}
