/**
 * The live feed around someone answering in it. A feed redrawn under a person takes what they
 * are doing: the field they type a reply in, or their click (a button pressed, the feed
 * redrawn, and the click lands on nothing). So news that arrives while a reply's form has
 * focus, or while a button in the feed is pressed, is held, and the status line counts what
 * is new; it is drawn once they are done: focus has left the form, or the press has ended
 * (Safari and Firefox on macOS do not focus a pressed button, so focus alone cannot tell). What
 * a person's own action asks for (the feed after their answer) is drawn at once, and any
 * drawing keeps a reply typed and not sent, with its focus.
 */
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import { fill, h } from "../dom.ts";

/** Shows a page of the feed; `own` for the page a person's own action asked for. */
export type ShowFeed = (notifications: Notification[], own?: boolean) => void;

/** "1 new notification", "3 new notifications". */
function newOnes(count: number): string {
  return `${count} new notification${count === 1 ? "" : "s"}`;
}

/** Which reply field an input is, across redraws: its notification and its action's label. */
function key(input: HTMLInputElement): string {
  return `${input.closest("li")?.dataset.id}\n${input.getAttribute("aria-label")}`;
}

/** Runs `draw`, keeping the replies typed in `list` and which of them had focus. */
function keepingDrafts(list: HTMLElement, draw: () => void): void {
  const inputs = () => [...list.querySelectorAll("input")];
  const drafts = new Map(inputs().flatMap((i) => (i.value ? [[key(i), i.value] as const] : [])));
  const a = document.activeElement;
  const focus =
    a instanceof HTMLInputElement && list.contains(a)
      ? { key: key(a), start: a.selectionStart, end: a.selectionEnd }
      : undefined;
  draw();
  for (const input of inputs()) {
    const k = key(input);
    const draft = drafts.get(k);
    if (draft !== undefined) input.value = draft;
    if (k === focus?.key && !list.contains(document.activeElement)) {
      input.focus();
      input.setSelectionRange(focus.start, focus.end);
    }
  }
}

/**
 * The feed's `show`: `draw` draws a page into `list` and its `status` line, held as above while
 * someone answers; the status line then counts what is held, and `told` (a live region, not
 * drawn) says the same to a screen reader. Listeners outside `list` end with `signal`.
 */
export function holdingFeed(
  list: HTMLElement,
  status: HTMLElement,
  told: HTMLElement,
  draw: (notifications: Notification[]) => void,
  signal: AbortSignal,
): ShowFeed {
  let held: Notification[] | undefined;
  let pressing = false;
  const answering = () =>
    pressing || list.contains(document.activeElement?.closest("form") ?? null);
  const show: ShowFeed = (notifications, own = false) => {
    if (!own && answering()) {
      held = notifications;
      const shown = new Set([...list.querySelectorAll("li")].map((li) => li.dataset.id));
      const fresh = notifications.filter((n) => !shown.has(n.id)).length;
      if (fresh > 0) {
        const text = `${newOnes(fresh)}, shown when you finish your reply.`;
        // In the status line's place, on one line and at its height (an error and its
        // "reconnecting…" can take two): the feed below must not move under a press.
        status.style.minHeight = `${status.getBoundingClientRect().height}px`;
        fill(status, h("span", { class: "held" }, text));
        fill(told, text);
      }
      return;
    }
    held = undefined;
    fill(told);
    status.style.minHeight = "";
    keepingDrafts(list, () => draw(notifications));
  };
  // After the event's own work (the click a press ends in), if the person is done.
  const release = () =>
    setTimeout(() => {
      if (held && !answering()) show(held);
    }, 0);
  list.addEventListener("focusout", release);
  list.addEventListener("pointerdown", ({ target, button }) => {
    if (button === 0 && target instanceof Element && target.closest("button")) pressing = true;
  });
  for (const type of ["pointerup", "pointercancel"]) {
    const ended = () => {
      if (!pressing) return;
      pressing = false;
      release();
    };
    window.addEventListener(type, ended, { signal });
  }
  return show;
}
