/** The account's receiving devices: list, rename, set topics and quiet hours, remove, send a test, pair a phone. */
import qrcode from "qrcode-generator";
import type { Device } from "../../../gen/herald/v1/device_pb.ts";
import { quietHoursText } from "../../../src/domain/quiet-hours.ts";
import { api, date, errorText } from "../api.ts";
import { action, notice, route } from "../app.ts";
import { fill, h, toast, when } from "../dom.ts";

/**
 * Why a phone cannot use a link to `base`, or null when it can: a loopback address is the phone
 * itself there, and a phone's browser takes notifications only from https pages.
 */
function phoneWarning(base: string): HTMLElement | null {
  const { hostname, protocol } = new URL(base);
  const loopback = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(hostname);
  if (!loopback && protocol === "https:") return null;
  const why = loopback
    ? `Phones cannot use this link: ${hostname} is this computer's own address, and on a phone it is the phone itself.`
    : "Phones cannot use this link: it is plain http, and a phone's browser takes notifications only from https pages.";
  return notice(
    h(
      "span",
      {},
      `${why} Put Herald behind TLS at a name the phone reaches, and set HERALD_PUBLIC_URL to it: `,
      h("a", { href: "/docs/delivery.md", target: "_blank", rel: "noopener" }, "docs/delivery.md"),
      ". Another computer on this machine can still use it.",
    ),
    "error",
  );
}

function pairPanel(): HTMLElement {
  const out = h("div");
  const start = h(
    "button",
    {
      type: "button",
      class: "primary",
      onclick: async () => {
        try {
          const { code, expiresAt } = await api.devices.createPairingCode({});
          const { publicUrl } = await api.account.getServerInfo({});
          const base = publicUrl.replace(/\/$/, "") || location.origin;
          const url = `${base}/pair#${code}`;
          const qr = qrcode(0, "M");
          qr.addData(url);
          qr.make();
          fill(
            out,
            h(
              "div",
              { class: "row" },
              h(
                "div",
                { class: "qr" },
                h("img", {
                  src: qr.createDataURL(5, 12),
                  alt: `QR code of the pairing link ${url}`,
                  width: 200,
                  height: 200,
                }),
              ),
              h(
                "div",
                {},
                h("p", {}, "On the phone, open this link (or scan the code):"),
                h("p", {}, h("a", { href: url }, url)),
                h(
                  "p",
                  {},
                  "Pairing code: ",
                  h("span", { class: "code", "aria-label": "Pairing code" }, code),
                ),
                h(
                  "p",
                  { class: "muted" },
                  `Works once, until ${date(expiresAt)?.toLocaleTimeString()}. On an iPhone, add Herald to the home screen first (Share → Add to Home Screen), then open it from there.`,
                ),
                phoneWarning(base),
              ),
            ),
          );
        } catch (err) {
          fill(out, notice(errorText(err), "error"));
        }
      },
    },
    "Pair a phone or another computer",
  );
  return h("div", { class: "panel" }, h("h2", {}, "Add a device"), start, out);
}

/** A button of a device's row: runs `run`, then redraws, or says why it failed. */
function actionButton(
  label: string,
  device: string,
  run: () => Promise<unknown>,
  refresh: () => Promise<void>,
  cls = "",
): HTMLElement {
  return action(
    label,
    `${label} ${device}`,
    async () => {
      await run();
      await refresh();
    },
    cls,
  );
}

/** Asks for a device's quiet hours (this browser's time zone), or none. */
async function setQuietHours(d: Device): Promise<void> {
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const current = d.quietHours ? `${d.quietHours.start}-${d.quietHours.end}` : "22:00-07:00";
  const typed = prompt(
    `Quiet hours of ${d.name}, as HH:MM-HH:MM in ${timeZone} (low and normal arrive silently; high breaks through). Empty: none.`,
    current,
  );
  if (typed === null) return;
  const m = /^\s*(\d{2}:\d{2})\s*[-–]\s*(\d{2}:\d{2})\s*$/.exec(typed);
  if (typed.trim() !== "" && !m) throw new Error("Write them as 22:00-07:00");
  const quietHours = m ? { timeZone, start: m[1] as string, end: m[2] as string } : undefined;
  await api.devices.setQuietHours({ id: d.id, quietHours });
}

/** Asks for the topics a device receives (a topic, project/topic or project/*), or every topic. */
async function setTopics(d: Device): Promise<void> {
  const typed = prompt(
    `Topics ${d.name} receives, separated by spaces or commas: a topic (deploys), a project's topic (ci/deploys) or all of a project's (ci/*). Empty: every topic.`,
    d.topics.join(" "),
  );
  if (typed === null) return;
  const topics = typed.split(/[\s,]+/).filter(Boolean);
  await api.devices.setTopicFilter({ id: d.id, topics });
}

function row(d: Device, refresh: () => Promise<void>): HTMLTableRowElement {
  const act = (label: string, run: () => Promise<unknown>, cls = "") =>
    actionButton(label, d.name, run, refresh, cls);
  return h(
    "tr",
    {},
    h("td", {}, d.name),
    h("td", {}, d.platform),
    h(
      "td",
      {},
      d.enabled
        ? h("span", { class: "badge ok" }, "active")
        : h("span", { class: "badge disabled", title: d.disabledReason }, "disabled"),
    ),
    h("td", {}, when(date(d.lastSeenAt))),
    h(
      "td",
      { class: "muted" },
      ...(d.topics.length
        ? d.topics.flatMap((t, i) => [...(i ? [", "] : []), h("span", { class: "topic" }, t)])
        : ["every topic"]),
    ),
    h("td", { class: "muted" }, quietHoursText(d.quietHours) || "none"),
    h(
      "td",
      { class: "actions-cell" },
      act("Send test", async () => {
        await api.devices.sendTestNotification({ id: d.id });
        toast(`Test sent to ${d.name}`);
      }),
      act("Topics", () => setTopics(d)),
      act("Quiet hours", () => setQuietHours(d)),
      act("Rename", async () => {
        const name = prompt(`New name for ${d.name}`, d.name);
        if (name && name !== d.name) await api.devices.renameDevice({ id: d.id, name });
      }),
      act(
        "Remove",
        async () => {
          if (confirm(`Remove ${d.name}? It stops receiving at once.`))
            await api.devices.removeDevice({ id: d.id });
        },
        "danger",
      ),
    ),
  );
}

route("/devices", {
  title: "Devices",
  nav: true,
  render(main) {
    const body = h("tbody");
    const refresh = async () => {
      const { devices } = await api.devices.listDevices({});
      fill(
        body,
        devices.length > 0
          ? devices.map((d) => row(d, refresh))
          : h(
              "tr",
              {},
              h(
                "td",
                { colspan: 7, class: "muted" },
                "No devices yet: pair one below, or use “Notify me in this browser”.",
              ),
            ),
      );
    };
    fill(
      main,
      h(
        "div",
        { class: "panel" },
        h(
          "table",
          { "aria-label": "Devices" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ...["Name", "Platform", "State", "Last seen", "Topics", "Quiet hours", ""].map((t) =>
                h("th", {}, t),
              ),
            ),
          ),
          body,
        ),
      ),
      pairPanel(),
    );
    void refresh();
    return undefined;
  },
});
