/**
 * A stream device in the open console (a browser without Web Push, or with notifications
 * refused): what arrives is shown as toasts (and OS notifications where allowed) and confirmed
 * in the background, those that arrived meanwhile in one call (src/sdk/receipts.ts).
 *
 * Before, each notification's receipt was awaited before the next was read: a console opened
 * again after a night away read its backlog at one round trip each, met its device's rate limit
 * (10 a second) after 60, and started its stream over, showing again the one whose receipt was
 * refused; and every one of them stacked a toast (and an OS notification) on the page. Now the
 * first few that arrive together are shown, and the rest are counted in one toast that points
 * to the Notifications page, which lists them all.
 */

import type { SubscribeResponse } from "../../gen/herald/v1/inbox_service_pb.ts";
import type { Notification as Sent } from "../../gen/herald/v1/notification_pb.ts";
import { placeAfter } from "../../src/domain/stream-place.ts";
import { Receipts } from "../../src/sdk/receipts.ts";
import { api, asDevice } from "./api.ts";
import { toast, toastMs } from "./dom.ts";
import { forgetDevice, loadDevice, type SavedDevice, saveDevice } from "./idb.ts";
import { whileHeard } from "./live.ts";

/** Notifications shown one by one within a toast's life; past them, one toast counts the rest. */
const shownAtOnce = 3;

/**
 * How long a receipt may take. One sent on a connection a network dropped without a word would
 * otherwise never end, and the receipts after it would wait behind it for good; past this it
 * fails and goes again.
 */
const receiptTimeoutMs = 5_000;

/** The stream this page reads, while it does: how to end it, and when it has (cursor written). */
let ending: { stop: AbortController; done: Promise<void> } | undefined;

/** Shows one notification in the page, and outside it if the person allowed notifications. */
function notifyOs(title: string, body: string, tag: string): void {
  if ("Notification" in window && Notification.permission === "granted")
    new Notification(title, { body, tag });
}

/** Shows what arrives: each of the first few at once, then one toast counting the rest. */
function arrivals(): (n: Sent) => void {
  let recent = 0;
  let more: { el: HTMLElement; count: number } | undefined;
  return (n) => {
    if (recent < shownAtOnce) {
      recent++;
      setTimeout(() => recent--, toastMs);
      toast(`${n.title}${n.message ? ` — ${n.message}` : ""}`);
      // In place of the earlier one with the same replace key.
      notifyOs(n.title, n.message, n.replaceKey ? `${n.projectId}/${n.replaceKey}` : n.id);
      return;
    }
    if (!more?.el.isConnected) more = { el: toast(""), count: 0 };
    more.count++;
    const text = `${more.count} more arrived: see Notifications`;
    more.el.textContent = text;
    notifyOs("Herald", text, "herald-more");
  };
}

/**
 * Keeps the device's cursor: the latest only, one write at a time, so that reading the stream
 * never waits for IndexedDB (a backlog read at a write each went at a receipt call each).
 */
function cursorKeeper() {
  let latest: SavedDevice | undefined;
  let writing: Promise<void> | undefined;
  const write = async () => {
    for (let d = latest; d; d = latest) {
      latest = undefined;
      await saveDevice(d).catch(() => {}); // the next one, or the next page, tries again
    }
    writing = undefined;
  };
  return {
    keep(d: SavedDevice): void {
      latest = d;
      writing ??= write();
    },
    /** Resolves when what was kept is written. */
    written: (): Promise<void> => writing ?? Promise.resolve(),
  };
}

/** Receives while the console is open; `signedOut` is told when the device was signed out. */
export async function receiveInPage(signedOut: () => void): Promise<void> {
  const saved = await loadDevice();
  if (saved?.platform !== "stream" || ending) return;
  const stop = new AbortController();
  const done = receive(saved, signedOut, stop.signal).finally(() => {
    ending = undefined;
  });
  ending = { stop, done };
  return done;
}

/**
 * Ends the page's stream without a word (this page is signing its own device out, and says so
 * itself), once what it received is written: the device can then be forgotten for good.
 */
export async function stopInPage(): Promise<void> {
  const e = ending;
  e?.stop.abort();
  await e?.done;
}

async function receive(saved: SavedDevice, signedOut: () => void, stopped: AbortSignal) {
  let device: SavedDevice = saved;
  const auth = () => ({ ...asDevice(device.credential), timeoutMs: receiptTimeoutMs });
  const receipts = new Receipts({
    many: (ids) => api.inbox.confirmReceipts({ ids }, auth()),
    one: (id) => api.inbox.ackNotification({ id }, auth()),
  });
  const show = arrivals();
  const cursor = cursorKeeper();
  const heard = whileHeard<SubscribeResponse>((msg) => msg.keepaliveInterval);
  while (!stopped.aborted) {
    try {
      const since = device.cursor ?? "";
      const open = (signal: AbortSignal) =>
        api.inbox.subscribe(
          { since },
          { ...asDevice(device.credential), signal: AbortSignal.any([signal, stopped]) },
        );
      // A stream a network dropped without a word is opened again from the cursor (live.ts).
      for await (const msg of heard(open)) {
        if (msg.event.case === "cleared")
          toast(
            msg.event.value.byDeviceId
              ? "Answered or acknowledged: it no longer needs anyone"
              : "Withdrawn: its asker stopped waiting",
          );
        if (msg.event.case !== "notification") continue;
        const n = msg.event.value;
        // Shown already, its receipt still on its way: the catch-up after a reconnect sends it
        // again.
        if (!receipts.has(n.id)) show(n);
        receipts.add(n.id);
        device = { ...device, cursor: placeAfter(device.cursor ?? "", n.id) };
        cursor.keep(device);
      }
    } catch (err) {
      if (stopped.aborted) break;
      if ((err as { code?: number }).code === 16) {
        // Signed out or removed elsewhere (the server ends the stream at once).
        await cursor.written();
        await forgetDevice();
        toast("This browser was signed out as a device elsewhere: it no longer receives here");
        signedOut();
        return;
      }
    }
    if (!stopped.aborted) await new Promise((r) => setTimeout(r, 2000));
  }
  await cursor.written();
}
