/**
 * The Herald Node SDK: publish and read notifications from scripts, servers and agents.
 *
 * ```ts
 * import { Herald } from "@herald/client";
 * const herald = new Herald({ apiKey: process.env.HERALD_API_KEY });
 * await herald.notify({ title: "Deploy finished", priority: "high" });
 * ```
 */
import { randomUUID } from "node:crypto";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";
import {
  NotifyService,
  type WaitForResponseResponse,
} from "../../gen/herald/v1/notify_service_pb.ts";
import { type Answer, type AskInput, type AskOptions, ask } from "./ask.ts";
import { createSdkConnectTransport } from "./connect-transport.ts";
import { HeraldError } from "./errors.ts";
import { createSdkGrpcTransport } from "./grpc-transport.ts";
import { retryDelayMs, sleep, transient } from "./retry.ts";
import { isServerUrl } from "./server-url.ts";
import type { HeraldOptions, ListFilter, NotifyInput, NotifyOptions, Priority } from "./types.ts";

export type {
  Answer,
  AskInput,
  AskOptions,
  HeraldOptions,
  ListFilter,
  Notification,
  NotifyInput,
  NotifyOptions,
  Priority,
};

/** A client of one Herald server with one credential. Safe to share. */
export class Herald {
  readonly #client: Client<typeof NotifyService>;
  readonly #headers: Record<string, string>;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;

  constructor(options: HeraldOptions = {}) {
    const secret =
      options.apiKey ?? options.token ?? process.env.HERALD_API_KEY ?? process.env.HERALD_TOKEN;
    if (!secret) {
      throw new HeraldError("no credential: pass apiKey or token, or set HERALD_API_KEY", {
        code: "unauthenticated",
        status: 401,
      });
    }
    const baseUrl = options.baseUrl ?? process.env.HERALD_URL ?? "http://127.0.0.1:8080";
    if (!isServerUrl(baseUrl)) {
      const from = options.baseUrl !== undefined ? "baseUrl" : "HERALD_URL";
      throw new HeraldError(
        `${from} is "${baseUrl}", not a server's URL: give it whole, as https://herald.example.com`,
        { code: "invalid_argument", status: 400 },
      );
    }
    const transport: Transport =
      options.transport === "grpc"
        ? createSdkGrpcTransport(baseUrl)
        : createSdkConnectTransport(baseUrl);
    this.#client = createClient(NotifyService, transport);
    this.#headers = { authorization: `Bearer ${secret}` };
    if (options.project) this.#headers["herald-project"] = options.project;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#maxRetries = options.maxRetries ?? 5;
  }

  /**
   * Publishes a notification and returns it. Transient failures (network errors, `unavailable`,
   * rate limits, deadlines) are retried with backoff and jitter under one idempotency key, so a
   * retry never delivers twice.
   */
  async notify(input: NotifyInput, options: NotifyOptions = {}): Promise<Notification> {
    const key = options.idempotencyKey ?? randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await this.#client.notify(input, {
          headers: { ...this.#headers, "idempotency-key": key },
          timeoutMs: this.#timeoutMs,
          ...(options.signal ? { signal: options.signal } : {}),
        });
        if (!res.notification) throw new Error("empty response");
        return res.notification;
      } catch (err) {
        const e = HeraldError.from(err);
        if (!transient(e) || attempt >= this.#maxRetries || options.signal?.aborted) throw e;
        await sleep(retryDelayMs(e, attempt), options.signal);
      }
    }
  }

  /** One notification of the project, with its delivery status per device. */
  async getNotification(id: string): Promise<Notification> {
    try {
      const res = await this.#client.getNotification(
        { id },
        { headers: this.#headers, timeoutMs: this.#timeoutMs },
      );
      return res.notification as Notification;
    } catch (err) {
      throw HeraldError.from(err);
    }
  }

  /**
   * Cancels what of a notification was not sent yet: a scheduled one whole, or the copies no
   * provider has been handed; an unanswered question is closed even once sent. Idempotent;
   * `not_cancelable` when everything was already sent.
   */
  async cancelNotification(id: string): Promise<Notification> {
    try {
      const res = await this.#client.cancelNotification(
        { id },
        { headers: this.#headers, timeoutMs: this.#timeoutMs },
      );
      return res.notification as Notification;
    } catch (err) {
      throw HeraldError.from(err);
    }
  }

  /**
   * Asks the person a question and waits for the answer: publishes `input` with its `actions`
   * (at most 3), then waits until a device answers, it is dismissed or expires, or `timeoutMs`
   * (default 10 minutes) passes. When the wait ends without an answer (or `signal` aborts), the
   * question is withdrawn: it can no longer be answered, and the devices clear it.
   *
   * ```ts
   * const a = await herald.ask({ title: "Deploy v42?", actions: [{ id: "yes", label: "Deploy" }] });
   * if (a.outcome === "answered" && a.actionId === "yes") deploy();
   * ```
   */
  ask(input: AskInput, options: AskOptions = {}): Promise<Answer> {
    return ask(
      {
        notify: (i, o) => this.notify(i, o),
        waitForResponse: (id, seconds, signal) => this.waitForResponse(id, seconds, signal),
        cancel: (id) => this.cancelNotification(id),
      },
      input,
      options,
    );
  }

  /**
   * Waits up to `timeoutSeconds` (1..300) for the answer to a notification with actions:
   * `outcome` is `answered`, `dismissed`, `expired`, `canceled`, or `waiting` (call again).
   */
  async waitForResponse(
    id: string,
    timeoutSeconds = 60,
    signal?: AbortSignal,
  ): Promise<WaitForResponseResponse> {
    try {
      return await this.#client.waitForResponse(
        { id, timeoutSeconds },
        {
          headers: this.#headers,
          timeoutMs: this.#timeoutMs + timeoutSeconds * 1000,
          ...(signal ? { signal } : {}),
        },
      );
    } catch (err) {
      throw HeraldError.from(err);
    }
  }

  /** One page of the project's notifications, newest first. */
  async listNotifications(
    filter: ListFilter = {},
  ): Promise<{ notifications: Notification[]; nextPageToken: string }> {
    try {
      return await this.#client.listNotifications(filter, {
        headers: this.#headers,
        timeoutMs: this.#timeoutMs,
      });
    } catch (err) {
      throw HeraldError.from(err);
    }
  }

  /** Every notification matching the filter, newest first, fetching pages as it goes. */
  async *notifications(filter: Omit<ListFilter, "pageToken"> = {}): AsyncGenerator<Notification> {
    let pageToken = "";
    do {
      const page = await this.listNotifications({ ...filter, pageToken });
      yield* page.notifications;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }
}
