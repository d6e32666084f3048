/**
 * "Notify me in this browser": the browser becomes a receiving device of the account. With Web
 * Push (a service worker and the push service of the browser), notifications appear even with
 * the tab closed. Where Web Push is unavailable (no support, permission refused, not configured
 * on the server), the open console receives over the live stream instead, and says so.
 */
import { api, asDevice, errorText } from "./api.ts";
import { fill, h, toast } from "./dom.ts";
import { forgetDevice, loadDevice, type SavedDevice, saveDevice } from "./idb.ts";
import { receiveInPage, stopInPage } from "./stream-device.ts";

type SignIn = (platform: "web" | "stream") => Promise<{ id: string; credential: string }>;

/** "Chrome on Linux": how the device list names this browser. */
export function browserName(): string {
  const ua = navigator.userAgent;
  const browser = ["Edg", "Firefox", "Chrome", "Safari"].find((b) => ua.includes(`${b}/`));
  const os = ["Android", "iPhone", "iPad", "Mac OS X", "Windows", "Linux"].find((o) =>
    ua.includes(o),
  );
  const name: Record<string, string> = { Edg: "Edge", "Mac OS X": "macOS" };
  return `${browser ? (name[browser] ?? browser) : "Browser"}${os ? ` on ${name[os] ?? os}` : ""}`;
}

const base64url = (s: string) =>
  Uint8Array.from(atob(s.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));

/**
 * Why this page cannot have Web Push, in words a person can act on, or undefined when it can.
 * Both cases below said "this browser has no Web Push", of a browser that has it.
 */
function noWebPush(): string | undefined {
  // Browsers give service workers and Web Push to https pages (and localhost) only.
  if (!window.isSecureContext) {
    return "browsers give Web Push to https pages only; open the console at Herald's https address, HERALD_PUBLIC_URL";
  }
  const apple = /iPhone|iPad/.test(navigator.userAgent);
  if (
    !("serviceWorker" in navigator) ||
    !("PushManager" in window) ||
    !("Notification" in window)
  ) {
    // Safari on iOS gives Web Push to web apps on the Home Screen only.
    return apple
      ? "on an iPhone or iPad, Web Push needs Herald on the Home Screen: Share, then Add to Home Screen, and open it from there"
      : "this browser has no Web Push";
  }
  return undefined;
}

async function pushSubscription(): Promise<PushSubscription | string> {
  const why = noWebPush();
  if (why) return why;
  if ((await Notification.requestPermission()) !== "granted")
    return "notifications are not allowed for this site";
  let key: string;
  try {
    key = (await api.devices.getWebPushKey({})).publicKey;
  } catch (err) {
    return errorText(err);
  }
  const reg = await navigator.serviceWorker.register("/sw.js");
  await navigator.serviceWorker.ready;
  // The browser's push service may be out of reach (a proxy, a de-Googled browser, an air-gapped
  // lab): `subscribe` then never settles. A deadline, and the live stream instead.
  const subscribing = reg.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: base64url(key),
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(`the browser's push service did not answer within ${subscribeDeadlineMs / 1000} s`),
      subscribeDeadlineMs,
    );
  });
  try {
    const first = await Promise.race([subscribing, late]);
    // A subscription that comes after all is given up, so no push goes to a device not made.
    if (typeof first === "string") void subscribing.then((s) => s.unsubscribe()).catch(() => {});
    return first;
  } catch (err) {
    return `the browser's push service refused: ${(err as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

/** How long the browser's push service has to give a subscription. */
const subscribeDeadlineMs = 10_000;

/** Makes this browser a device; returns how it receives, and why not by push if it does not. */
export async function enableThisBrowser(
  signIn: SignIn,
): Promise<{ platform: "web" | "stream"; why?: string }> {
  const sub = await pushSubscription();
  if (typeof sub === "string") {
    const device = await signIn("stream");
    await saveDevice({ ...device, platform: "stream" });
    void streamInPage();
    return { platform: "stream", why: sub };
  }
  const device = await signIn("web");
  const json = sub.toJSON();
  await api.devices.registerChannel(
    {
      channel: {
        case: "webPush",
        value: {
          endpoint: json.endpoint ?? "",
          p256dh: json.keys?.p256dh ?? "",
          auth: json.keys?.auth ?? "",
        },
      },
    },
    asDevice(device.credential),
  );
  await saveDevice({ ...device, platform: "web" });
  return { platform: "web" };
}

/** Draws the top bar's button again (thisBrowserButton's latest). */
let redrawButton: () => void = () => {};

/** A stream device receives while the console is open (stream-device.ts). */
export const streamInPage = () => receiveInPage(() => redrawButton());

/** Pushes the service worker received while a console is open are shown in the page too. */
export function listenToServiceWorker(): void {
  navigator.serviceWorker?.addEventListener("message", (e: MessageEvent) => {
    const data = e.data as { type?: string; notification?: { title: string } };
    if (data?.type === "herald-push" && data.notification)
      toast(`Received: ${data.notification.title}`);
  });
}

/** Signs this browser in as a device with a pairing code: Web Push if it can, a stream if not. */
export function pairThisBrowser(code: string): ReturnType<typeof enableThisBrowser> {
  return enableThisBrowser(async (platform) => {
    const r = await api.devices.signInDevice({
      method: { case: "pairingCode", value: code },
      name: browserName(),
      platform,
    });
    return { id: r.device?.id ?? "", credential: r.deviceCredential };
  });
}

/**
 * Ends this browser as a device: signed out (best effort: it may be gone already), its push
 * subscription dropped, its stream in the page ended, and forgotten. "Stop notifications here"
 * does it, and so does signing out of the console (app.ts).
 */
export async function stopThisBrowser(): Promise<boolean> {
  const saved = await loadDevice();
  if (!saved) return false;
  await stopInPage();
  await api.devices.signOutDevice({}, asDevice(saved.credential)).catch(() => {});
  const reg = await navigator.serviceWorker?.getRegistration();
  await (await reg?.pushManager.getSubscription())?.unsubscribe();
  await forgetDevice();
  redrawButton();
  return true;
}

/**
 * A device this browser keeps that the signed-in account does not have is ended and forgotten:
 * another account's (its session ended without "Sign out", and someone else signed in here), or
 * one removed while no page was open. Before, the console of the second account went on
 * receiving, and showing, the first account's notifications.
 */
export async function keepOnlyTheAccountsDevice(): Promise<void> {
  const saved = await loadDevice();
  if (!saved) return;
  const { devices } = await api.devices.listDevices({});
  if (!devices.some((d) => d.id === saved.id)) await stopThisBrowser();
}

/** Says this browser is a device, with the button that stops it. */
function receiving(saved: SavedDevice): HTMLElement[] {
  return [
    h(
      "span",
      { class: "badge ok", role: "status" },
      saved.platform === "web"
        ? "This browser receives notifications"
        : "This page receives notifications while open",
    ),
    h(
      "button",
      {
        type: "button",
        onclick: () => stopThisBrowser(), // it draws the button again
      },
      "Stop notifications here",
    ),
  ];
}

/** Turns this browser on as a device: Web Push if it can, the page's own stream if not. */
function enableButton(redraw: () => void): HTMLButtonElement {
  const on = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: async () => {
        on.disabled = true;
        on.textContent = "Asking the browser's push service…";
        on.setAttribute("aria-busy", "true");
        try {
          const { code } = await api.devices.createPairingCode({});
          const result = await pairThisBrowser(code);
          toast(
            result.platform === "web"
              ? "This browser now receives notifications, even with the tab closed."
              : `Web Push is unavailable (${result.why}): this page receives notifications while it is open.`,
          );
        } catch (err) {
          toast(errorText(err));
        }
        redraw();
      },
    },
    "Notify me in this browser",
  );
  return on;
}

/** The top bar's button: turns this browser on as a device, or says it is one. */
export function thisBrowserButton(): HTMLElement {
  const box = h("div", { class: "row" });
  const draw = async () => {
    const saved = await loadDevice();
    if (saved) fill(box, ...receiving(saved));
    else
      fill(
        box,
        enableButton(() => void draw()),
      );
  };
  redrawButton = () => void draw();
  void draw();
  return box;
}
