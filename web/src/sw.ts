/// <reference lib="webworker" />
/**
 * The service worker: shows a push as an OS notification (with the tab closed), acknowledges
 * it so the publisher sees `delivered`, tells open consoles, and on a click marks it opened and
 * opens its `click_url` (or the console); its Acknowledge button (a notification that asks for
 * acknowledgement) acknowledges it. A question's actions are its buttons: one answers it; a reply
 * action (text to type) opens the console's page of the notification to type it there.
 */
import { loadDevice } from "./idb.ts";

declare const self: ServiceWorkerGlobalScope;

interface Pushed {
  id: string;
  topic: string;
  title: string;
  message: string;
  priority?: string;
  click_url?: string | null;
  /** Awaits the person's acknowledgement: an Acknowledge button. */
  require_ack?: boolean;
  /** A question: its actions as buttons (the browser shows as many as it can, often 2). */
  actions?: { id: string; label: string; reply?: boolean }[];
  /** Shown in place of the earlier notification with the same tag (a replace key's). */
  tag?: string;
  /** It arrived during this device's quiet hours: shown silently. */
  quiet?: boolean;
}

const rank: Record<string, number> = { low: 0, normal: 1, high: 2 };

/**
 * What a push replaces: shown under its tag (a replace key's, or its own id), it takes the place
 * of the notification already shown with that tag; the browser alerts the person again only
 * when the priority rises (`renotify`), else it updates it quietly.
 */
async function placeOf(n: Pushed): Promise<{ tag: string; renotify: boolean }> {
  const tag = n.tag ?? n.id;
  if (!n.tag) return { tag, renotify: false };
  const shown = await self.registration.getNotifications({ tag });
  const before = Math.max(-1, ...shown.map((s) => rank[s.data?.priority ?? "normal"] ?? 1));
  const rose = before >= 0 && (rank[n.priority ?? "normal"] ?? 1) > before;
  return { tag, renotify: rose && n.quiet !== true };
}

/** The buttons of a push: the question's actions, or Acknowledge. */
function buttonsOf(n: Pushed): { action: string; title: string }[] {
  if (n.actions?.length)
    return n.actions.map((a) => ({ action: `answer:${a.id}`, title: a.label }));
  return n.require_ack ? [{ action: "ack", title: "Acknowledge" }] : [];
}

/** A device call over the Connect protocol (JSON), with this browser's device credential. */
async function asDevice(method: string, body: unknown): Promise<void> {
  const device = await loadDevice();
  if (!device) return;
  await fetch(`/herald.v1.InboxService/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${device.credential}` },
    body: JSON.stringify(body),
  }).catch(() => {});
}

self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  const n = (event.data?.json() ?? {}) as Pushed & { type?: string };
  // Acknowledged on another device: close it here.
  if (n.type === "clear") {
    event.waitUntil(
      self.registration.getNotifications().then((shown) => {
        for (const s of shown) if (s.tag === n.id || s.data?.id === n.id) s.close();
      }),
    );
    return;
  }
  event.waitUntil(
    (async () => {
      const { tag, renotify } = await placeOf(n);
      await self.registration.showNotification(n.title || "Herald", {
        body: n.message,
        tag,
        silent: n.quiet === true,
        icon: "/icon-192.png",
        badge: "/icon-192.png",
        requireInteraction:
          n.priority === "high" || n.require_ack === true || Boolean(n.actions?.length),
        data: { id: n.id, url: n.click_url ?? null, replies: replyIds(n), priority: n.priority },
        // Not in TypeScript's DOM types yet, but in every browser with Web Push.
        ...{ actions: buttonsOf(n), renotify },
      });
      await asDevice("AckNotification", { id: n.id });
      for (const client of await self.clients.matchAll({ type: "window" })) {
        client.postMessage({ type: "herald-push", notification: n });
      }
    })(),
  );
});

const replyIds = (n: Pushed) => (n.actions ?? []).filter((a) => a.reply).map((a) => a.id);

self.addEventListener("notificationclick", (event) => {
  const { id, url, replies } = (event.notification.data ?? {}) as {
    id?: string;
    url?: string | null;
    replies?: string[];
  };
  event.notification.close();
  // A question's button: the answer (the first on any device wins; the others clear).
  if (event.action.startsWith("answer:") && id) {
    const actionId = event.action.slice("answer:".length);
    event.waitUntil(
      replies?.includes(actionId)
        ? self.clients.openWindow(`/notifications#answer=${id}`).then(() => {})
        : asDevice("RespondToNotification", { id, actionId }),
    );
    return;
  }
  // The Acknowledge button: the person acknowledged it; repeats stop, other devices clear.
  if (event.action === "ack") {
    if (id) event.waitUntil(asDevice("AckNotification", { id, acknowledge: true }));
    return;
  }
  event.waitUntil(
    (async () => {
      if (id) await asDevice("MarkOpened", { id });
      await self.clients.openWindow(url || `/notifications#${id ?? ""}`);
    })(),
  );
});
