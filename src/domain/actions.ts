/**
 * Actions on a notification: the publish rules protovalidate cannot express (a label is not
 * blank), what makes an answer valid for the notification it answers, and until when answers
 * are taken. An answer is the person's; the first one, on any device, is the one recorded.
 */
import type { FieldViolation } from "../errors.ts";

/** A button as stored with the notification. */
export interface StoredAction {
  id: string;
  label: string;
  reply: boolean;
}

/** A reply's text: at most this many Unicode code points. */
export const replyMaxCodePoints = 1000;

/** Without a ttl, answers are taken for as long as delivery is tried: 24 hours. */
const defaultAnswerWindowMs = 24 * 60 * 60 * 1000;

export function actionViolations(actions: readonly { label: string }[]): FieldViolation[] {
  const out: FieldViolation[] = [];
  actions.forEach((a, i) => {
    if (a.label.length > 0 && a.label.trim() === "") {
      out.push({ field: `actions[${i}].label`, message: "must not be blank" });
    }
  });
  return out;
}

/** The actions as stored: null when there are none. */
export function storedActions(
  actions: readonly { id: string; label: string; reply: boolean }[],
): StoredAction[] | null {
  if (actions.length === 0) return null;
  return actions.map((a) => ({ id: a.id, label: a.label, reply: a.reply }));
}

/** When answers stop being taken: the ttl's end, or 24 hours after delivery. */
export function answerDeadline(n: {
  expires_at: Date | null;
  deliver_at: Date | null;
  created_at: Date;
}): Date {
  return n.expires_at ?? new Date((n.deliver_at ?? n.created_at).getTime() + defaultAnswerWindowMs);
}

/**
 * Why this answer does not fit the notification's actions (a field violation), or undefined.
 * A reply action needs text; any other action takes none.
 */
export function answerViolation(
  actions: readonly StoredAction[],
  answer: { actionId: string; text: string },
): FieldViolation | undefined {
  const action = actions.find((a) => a.id === answer.actionId);
  if (!action) {
    return {
      field: "action_id",
      message: `must be one of the notification's actions: ${actions.map((a) => a.id).join(", ")}`,
    };
  }
  const length = [...answer.text].length;
  if (action.reply && answer.text.trim() === "") {
    return { field: "text", message: `action ${action.id} takes a reply: give the text` };
  }
  if (action.reply && length > replyMaxCodePoints) {
    return { field: "text", message: `must be at most ${replyMaxCodePoints} characters` };
  }
  if (!action.reply && answer.text !== "") {
    return { field: "text", message: `action ${action.id} takes no text` };
  }
  return undefined;
}
