/**
 * Comparing two transports call by call (the SDK's against Connect-node's): what a call ended
 * with, in the terms a caller sees (the message, or the error's code, message, details and
 * metadata's names).
 */
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { expect } from "vitest";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";

export async function outcome(call: () => Promise<unknown>) {
  try {
    return { ok: await call() };
  } catch (err) {
    const ce = ConnectError.from(err);
    const metadata = [...ce.metadata.keys()].filter((k) => k !== "date").sort();
    const details = ce.details.map((d) => ("desc" in d ? d.desc.typeName : d.type));
    return { code: Code[ce.code], message: ce.rawMessage, metadata, details };
  }
}

/** Runs `call` over Connect-node's transport and the SDK's to `baseUrl`; both outcomes. */
export async function compare(
  transports: { theirs: (baseUrl: string) => Transport; ours: (baseUrl: string) => Transport },
  baseUrl: string,
  call: (t: Transport) => Promise<unknown>,
) {
  const theirs = await outcome(() => call(transports.theirs(baseUrl)));
  return { theirs, ours: await outcome(() => call(transports.ours(baseUrl))) };
}

type Pair = Parameters<typeof compare>[0];

/** A publish over `t`, with a deadline or a signal if given. */
export const publish = (timeoutMs?: number, signal?: AbortSignal) => (t: Transport) =>
  createClient(NotifyService, t).notify({ title: "x" }, { timeoutMs, signal });

/**
 * To a server at `url` that never answers: a publish past its 150 ms deadline, and one
 * cancelled after 50 ms, over both transports.
 */
export async function lateAndCancelled(transports: Pair, url: string) {
  const late = await compare(transports, url, publish(150));
  const cancelled = await compare(transports, url, (t) => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    return publish(undefined, abort.signal)(t);
  });
  return { late, cancelled };
}

/**
 * A publish to `url` ends the same over both transports, as `expected`: "ok" (the bare servers'
 * answer, `replayed: true`) or an error's code.
 */
export async function expectSameOutcome(transports: Pair, url: string, expected: string) {
  const { theirs, ours } = await compare(transports, url, publish());
  expect(ours).toEqual(theirs);
  if (expected === "ok") expect(ours).toMatchObject({ ok: { replayed: true } });
  else expect(ours).toMatchObject({ code: expected });
}
