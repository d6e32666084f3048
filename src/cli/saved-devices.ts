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

/** A stream device this machine holds: its credential, places, server and account. */
export interface SavedDevice {
  id: string;
  credential: string;
  /** Where a listen of every topic is in the device's stream (stream-place.ts). */
  cursor?: string;
  /** Where a listen of some topics is, by its topics (`placeKey`). */
  cursors?: Record<string, string>;
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

/** The saved device `herald listen` uses for a receiver, if this machine has one. */
export const deviceOf = (c: SavedConfig, r: Receiver): SavedDevice | undefined =>
  savedDevices(c, r.url).find((d) => isOf(d, r));

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

/** The config with `device` saved (replacing the one of that id), in today's shape. */
export function withDevice(c: SavedConfig, device: SavedDevice, urlInUse: string): SavedConfig {
  const rest = withoutDevices(c, (d) => d.id === device.id, urlInUse);
  return { ...rest, devices: [...(rest.devices ?? []), device] };
}

/** The saved login's devices: the ones its logout and its replacement end. */
export function loginDevices(c: SavedConfig, urlInUse: string): (d: SavedDevice) => boolean {
  const login = { url: c.url ?? urlInUse, accountId: c.accountId };
  return (d) => isOf(d, login);
}

/**
 * Whom `herald listen` receives for, as the config file `file` and the command say: the server in
 * use, and the account of the CLI token in use. The saved login's account is known (but for a
 * login saved before logins kept it); a token given by `--token` or `HERALD_TOKEN` is asked
 * about (`GetAccount`).
 */
export async function receiverInUse(ctx: Context, file: SavedConfig): Promise<Receiver> {
  const url = ctx.url;
  const owner = ctx.owner;
  const known = url === file.url ? file.accountId : undefined;
  // No token; or the saved login's, whose account is known, or is of another server than this.
  if (!owner || (owner.secret === file.token && (known || url !== file.url)))
    return { url, accountId: known };
  const me = await ctx
    .client(AccountService)
    .getAccount({}, { headers: ctx.headers(ctx.ownerToken) });
  return { url, accountId: me.account?.id };
}

/**
 * Each set of topics listened for keeps its own place in the device's stream. Before, the
 * listens of one machine kept one: a `listen --topic deploys --exec` started again after a
 * plain listen had moved the place on (and confirmed, for the device, what it showed) never ran
 * its command on the deploys that arrived while it was stopped.
 */
const placeKey = (topics: readonly string[]) => [...topics].sort().join(" ");

/** Where a listen of `topics` (a stored filter, each once: none for every topic) starts again. */
export const placeOf = (d: SavedDevice, topics: readonly string[]): string =>
  (topics.length ? d.cursors?.[placeKey(topics)] : d.cursor) ?? "";

/** The device with the place of a listen of `topics` moved to `id`. */
export function withPlace(d: SavedDevice, topics: readonly string[], id: string): SavedDevice {
  if (!topics.length) return { ...d, cursor: id };
  return { ...d, cursors: { ...d.cursors, [placeKey(topics)]: id } };
}
