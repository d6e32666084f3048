/**
 * The stream devices `herald listen` registered on this machine, each remembered with the server
 * and account it belongs to. Before, one device was saved, of no server in particular: a listen
 * with `--url`/`HERALD_URL` at another server presented it there, was refused, forgot it (while it
 * stayed signed in where it was made, receiving into a queue nobody read) and registered another,
 * which the next listen at the first server refused in turn; and a listen with `HERALD_TOKEN` of
 * another account received the saved login's account's notifications. Now a listen uses the
 * device of the server and account it listens as, and registers one only where it has none.
 */
import { AccountService } from "../../gen/herald/v1/account_service_pb.ts";
import type { SavedConfig } from "./config-store.ts";
import type { Context } from "./context.ts";

/** A stream device this machine holds: its credential, cursor, server and account. */
export interface SavedDevice {
  id: string;
  credential: string;
  cursor?: string;
  url: string;
  /** Unknown for a device saved before devices had their account. */
  accountId?: string;
}

/** Whom a device receives for: a server, and an account on it when known. */
export interface Receiver {
  url: string;
  accountId?: string;
}

/** The devices saved, one saved before they had their server (`device`) as the saved login's. */
export function savedDevices(c: SavedConfig, urlInUse: string): SavedDevice[] {
  const devices = c.devices ?? [];
  if (!c.device) return devices;
  return [...devices, { ...c.device, url: c.url ?? urlInUse, accountId: c.accountId }];
}

/** A device is of a receiver: the same server, and the same account where both are known. */
export const isOf = (d: SavedDevice, r: Receiver) =>
  d.url === r.url && (!d.accountId || !r.accountId || d.accountId === r.accountId);

/** The config with `device` saved (replacing the one of that id), in today's shape. */
export function withDevice(c: SavedConfig, device: SavedDevice, urlInUse: string): SavedConfig {
  const { device: _legacy, ...rest } = c;
  const others = savedDevices(c, urlInUse).filter((d) => d.id !== device.id);
  return { ...rest, devices: [...others, device] };
}

/** The config without the devices `gone` picks, in today's shape. */
export function withoutDevices(
  c: SavedConfig,
  gone: (d: SavedDevice) => boolean,
  urlInUse: string,
): SavedConfig {
  const { device: _legacy, devices: _d, ...rest } = c;
  const kept = savedDevices(c, urlInUse).filter((d) => !gone(d));
  return kept.length ? { ...rest, devices: kept } : rest;
}

/** The saved login's devices: the ones its logout and its replacement end. */
export function loginDevices(c: SavedConfig, urlInUse: string): (d: SavedDevice) => boolean {
  const login = { url: c.url ?? urlInUse, accountId: c.accountId };
  return (d) => isOf(d, login);
}

/**
 * Whom `herald listen` receives for: the server in use, and the account of the CLI token in use.
 * The saved login's account is known; a token given by `--token` or `HERALD_TOKEN` is asked
 * about, and only when a device of this server is saved (so only then does a listen need its
 * server up before it can wait for it); a device registered is asked about anyway.
 */
export async function receiverInUse(ctx: Context): Promise<Receiver> {
  const file = ctx.config.load();
  const url = ctx.url;
  const owner = ctx.owner;
  if (!owner || owner.secret === file.token)
    return { url, accountId: url === file.url ? file.accountId : undefined };
  if (!savedDevices(file, url).some((d) => d.url === url)) return { url };
  return { url, accountId: await accountOfToken(ctx) };
}

/** The account of the CLI token in use, as its server says. */
export async function accountOfToken(ctx: Context): Promise<string | undefined> {
  const me = await ctx
    .client(AccountService)
    .getAccount({}, { headers: ctx.headers(ctx.ownerToken) });
  return me.account?.id;
}
