/**
 * The thread that encrypts Web Push messages for a fan-out (web-push-encryptor.ts starts it): a
 * batch of (subscription keys, plaintext) in, one buffer of bodies back, moved rather than
 * copied. Each message's key agreement, HKDF and AES cost 100-200 µs; here that CPU is off the
 * event loop that claims, sends and records the fan-out's other pushes.
 */
import { parentPort } from "node:worker_threads";
import { encryptPayload, type Subscription } from "./web-push-request.ts";

/**
 * Messages to encrypt: each a subscription's keys and the index of its plaintext (a fan-out's
 * messages mostly share one, sent once).
 */
export interface EncryptBatch {
  id: number;
  plaintexts: string[];
  jobs: { keys: Subscription["keys"]; plaintext: number }[];
}

/** The batch's bodies, end to end in `bodies`; `ends[i]` is where body i ends, -1 if refused. */
export interface EncryptedBatch {
  id: number;
  bodies: ArrayBuffer;
  ends: number[];
  errors: (string | undefined)[];
}

export function encryptBatch({ id, plaintexts, jobs }: EncryptBatch): EncryptedBatch {
  const texts = plaintexts.map((t) => Buffer.from(t));
  const parts: Buffer[] = [];
  const ends: number[] = [];
  const errors: (string | undefined)[] = [];
  let end = 0;
  for (const j of jobs) {
    try {
      const body = encryptPayload(j.keys, texts[j.plaintext] as Buffer);
      parts.push(body);
      end += body.length;
      ends.push(end);
      errors.push(undefined);
    } catch (err) {
      ends.push(-1);
      errors.push((err as Error).message);
    }
  }
  // One buffer of its own (not Node's shared pool, which a transfer would take from the thread).
  const bodies = new ArrayBuffer(end);
  const into = new Uint8Array(bodies);
  let at = 0;
  for (const p of parts) {
    into.set(p, at);
    at += p.length;
  }
  return { id, bodies, ends, errors };
}

parentPort?.on("message", (m: EncryptBatch) => {
  const out = encryptBatch(m);
  parentPort?.postMessage(out, [out.bodies]);
});
