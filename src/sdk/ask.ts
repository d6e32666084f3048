/**
 * `herald.ask(…)`: publish a question with actions, then wait for the person's answer with
 * WaitForResponse long polls (each at most a minute, so no proxy cuts one), reporting progress
 * between them. The question ends when its asker gives up: when the wait times out or is aborted
 * (Ctrl-C, any signal that stops the CLI, an agent cancelling the MCP tool; even while the
 * question is still being published), `ask` withdraws it (CancelNotification closes an
 * unanswered question: it can no longer be answered, and the devices clear it). Its ttl is the
 * wait's too, unless given (at least 30 s): an asker killed outright cannot withdraw it, and it
 * expires then. A wait that fails on its way (the server restarting, a connection cut, a rate
 * limit) is asked again after the SDK's retry delay (retry.ts), within the same timeout: the
 * question stays open meanwhile, and an answer given then is the one the next wait returns.
 */
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";
import type { WaitForResponseResponse } from "../../gen/herald/v1/notify_service_pb.ts";
import { monotonicMs } from "../domain/clock.ts";
import { HeraldError } from "./errors.ts";
import { retryDelayMs, sleep, transient } from "./retry.ts";
import type { NotifyInput, NotifyOptions } from "./types.ts";

/** How a question ended. */
export interface Answer {
  /**
   * `answered` (see `actionId` and `text`), `dismissed` (acknowledged without an answer),
   * `expired` (its ttl passed), `canceled`, or `timeout` (the wait ended first).
   */
  outcome: "answered" | "dismissed" | "expired" | "canceled" | "timeout";
  /** The chosen action's id, when answered. */
  actionId?: string;
  /** What the person typed, for a reply action. */
  text?: string;
  /** The device the answer came from. */
  deviceId?: string;
  answeredAt?: Date;
  /** The question as it stands, with its delivery status. */
  notification: Notification;
}

export interface AskOptions extends NotifyOptions {
  /** How long to wait for the answer. Default 10 minutes; at most 24 hours. */
  timeoutMs?: number;
  /** Called once published, then after each wait, with the question's state. */
  onProgress?: (notification: Notification, waitedMs: number) => void;
  /** How long one wait lasts at most, 1..60 seconds (default 60): onProgress's rhythm. */
  pollSeconds?: number;
  /** Called when a wait failed in a way that passes, before it is asked again in `retryInMs`. */
  onRetry?: (error: HeraldError, retryInMs: number) => void;
  /**
   * Called when the wait ended unanswered and `ask` withdrew the question: `false` when the
   * server could not be told (it was unreachable); the question then expires at its ttl.
   */
  onWithdraw?: (withdrawn: boolean) => void;
}

/** The question: a publish with 1..3 actions (`reply: true` asks for text). */
export type AskInput = NotifyInput & { actions: { id: string; label: string; reply?: boolean }[] };

/** The calls `ask` makes, as the Herald client provides them. */
export interface AskCalls {
  notify(input: NotifyInput, options: NotifyOptions): Promise<Notification>;
  waitForResponse(
    id: string,
    timeoutSeconds: number,
    signal?: AbortSignal,
  ): Promise<WaitForResponseResponse>;
  cancel(id: string): Promise<Notification>;
}

const defaultTimeoutMs = 10 * 60_000;
const maxPollSeconds = 60;

export async function ask(calls: AskCalls, input: AskInput, options: AskOptions = {}) {
  const timeoutMs = Math.min(options.timeoutMs ?? defaultTimeoutMs, 24 * 3_600_000);
  const ttlSeconds =
    input.ttlSeconds ?? Math.min(86_400, Math.max(30, Math.ceil(timeoutMs / 1000)));
  const started = monotonicMs();
  // Stopped before it is sent, nothing is. Once sent, the publish is not cut short: aborted in
  // flight it may be committed all the same, and then nobody could withdraw it. Stopped while it
  // was on its way, it is withdrawn as soon as its id is known.
  const { signal, ...publish } = options;
  if (signal?.aborted) throw signal.reason;
  const question = await calls.notify({ ...input, ttlSeconds }, publish);
  options.onProgress?.(question, 0);
  let latest = question;
  // Giving up withdraws the question; an answer that came first still counts.
  const withdraw = async (): Promise<Answer> => {
    const withdrawn = await calls.cancel(question.id).then(
      (n) => {
        latest = n;
        return true;
      },
      () => false,
    );
    options.onWithdraw?.(withdrawn);
    if (latest.response) return answerOf("answered", latest);
    if (latest.acknowledgedAt) return answerOf("dismissed", latest);
    return { outcome: "timeout", notification: latest };
  };
  if (signal?.aborted) {
    await withdraw();
    throw signal.reason;
  }
  for (let failed = 0; ; ) {
    const left = timeoutMs - (monotonicMs() - started);
    if (left <= 0) return withdraw();
    // After a failed wait, a short one first: back at once is then known (onProgress) at once.
    const poll = failed ? 1 : Math.min(maxPollSeconds, options.pollSeconds ?? maxPollSeconds);
    const seconds = Math.max(1, Math.min(poll, Math.ceil(left / 1000)));
    let res: WaitForResponseResponse;
    try {
      res = await calls.waitForResponse(question.id, seconds, signal);
      failed = 0;
    } catch (err) {
      const e = HeraldError.from(err);
      if (signal?.aborted) await withdraw();
      if (signal?.aborted || !transient(e)) throw e;
      const delay = Math.min(retryDelayMs(e, failed++), left);
      options.onRetry?.(e, delay);
      await sleep(delay, signal).catch(async (stopped: unknown) => {
        await withdraw();
        throw stopped;
      });
      continue;
    }
    latest = res.notification ?? latest;
    if (res.outcome !== "waiting") return answerOf(res.outcome as Answer["outcome"], latest);
    options.onProgress?.(latest, monotonicMs() - started);
  }
}

/** An answer as JSON (snake_case, absent fields null): what the CLI and the MCP tool print. */
export function answerFields(a: Answer) {
  return {
    outcome: a.outcome,
    action_id: a.actionId ?? null,
    text: a.text ?? null,
    device_id: a.deviceId ?? null,
    answered_at: a.answeredAt?.toISOString() ?? null,
  };
}

function answerOf(outcome: Answer["outcome"], n: Notification): Answer {
  const r = n.response;
  if (!r) return { outcome, notification: n };
  return {
    outcome,
    actionId: r.actionId,
    text: r.text,
    deviceId: r.deviceId,
    ...(r.answeredAt && {
      answeredAt: new Date(Number(r.answeredAt.seconds) * 1000 + r.answeredAt.nanos / 1e6),
    }),
    notification: n,
  };
}
