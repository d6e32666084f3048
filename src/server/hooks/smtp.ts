/**
 * Email in (docs/integrations.md, "Email"): an SMTP listener, off unless HERALD_SMTP_PORT is set,
 * on smtp-server (Nodemailer's). Mail to an `email` hook's address (it carries the hook and its
 * secret) is parsed (services/hook-intake.ts) and published as that hook, like a POST to its URL.
 *
 * - A recipient that names no hook, or a wrong secret: 550 at RCPT TO (one answer for both,
 *   counted as a failed authentication of the client's address; a throttled address is refused
 *   at connection with 421).
 * - A message over the size limit: 552 (SIZE is advertised); a message that cannot be read: 554.
 * - Rate limits, a busy idempotency key, an outage: 451, so the sender's queue retries it;
 *   the monthly quota or a cap: 552.
 * - One client address holds at most `perAddress` of the listener's 100 connections (421 past
 *   it): a sender that opens many, or keeps them with NOOPs, leaves room for everyone else's.
 * - STARTTLS when the operator gives a key and a certificate, taken again when their files
 *   change (smtp-certificate.ts); no AUTH (the address is the credential); a client that idles
 *   for a minute is disconnected.
 */
import type { Readable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import type { FailedAuthThrottle } from "../../domain/failed-auth.ts";
import { emailRecipient } from "../../domain/hooks/index.ts";
import type { Log } from "../../domain/log.ts";
import { publicError } from "../../errors.ts";
import { type HookIntakes, mailCredentials } from "../../services/hook-intake.ts";
import { listenFailure, listenOptions } from "../../supervisor/port.ts";
import { mailContextValues } from "../call-context.ts";
import { type HookPublishOptions, publishHookEvent } from "./inbound.ts";
import { SmtpCertificate } from "./smtp-certificate.ts";

export interface SmtpOptions extends HookPublishOptions {
  intake: HookIntakes;
  host: string;
  port: number;
  tls: { keyFile: string; certFile: string } | undefined;
  failures: FailedAuthThrottle;
  /** The largest message (an inbound hook's body limit). */
  maxBytes: number;
  /** Connections open at once from one client address. */
  perAddress: number;
}

/** The connections open per client address, counted from connect (when let in) to close. */
function addressShare(perAddress: number) {
  const open = new Map<string, number>();
  const counted = new Set<string>();
  return {
    /** Counts the session in, or says it is one too many. */
    admit(session: SMTPServerSession): boolean {
      const n = open.get(session.remoteAddress) ?? 0;
      if (n >= perAddress) return false;
      open.set(session.remoteAddress, n + 1);
      counted.add(session.id);
      return true;
    },
    closed(session: SMTPServerSession): void {
      if (!counted.delete(session.id)) return;
      const n = (open.get(session.remoteAddress) ?? 1) - 1;
      if (n > 0) open.set(session.remoteAddress, n);
      else open.delete(session.remoteAddress);
    },
  };
}

interface Listener extends SmtpOptions {
  log: Log;
}

/** An SMTP reply: its code, and the text after it. */
const reply = (code: number, text: string) =>
  Object.assign(new Error(text), { responseCode: code });

/** What an error of a publish means to the sending mail server. */
function smtpReply(err: unknown): Error {
  const e = publicError(err);
  switch (e.code) {
    case "invalid_argument": {
      const why = e.violations.map((v) => `${v.field} ${v.message}`).join("; ") || e.detail;
      return reply(554, `5.6.0 ${why}`);
    }
    case "quota_exceeded":
    case "limit_exceeded":
      return reply(552, `5.2.2 ${e.detail}`);
    case "unauthenticated":
    case "permission_denied":
    case "not_found":
      return reply(550, "5.7.1 not accepted");
    default:
      return reply(451, `4.3.0 ${e.detail}: try again later`);
  }
}

/**
 * A message's bytes, up to `maxBytes` and one chunk: past that the rest is read and dropped (the
 * client is answered 552 once it has sent it all). Before, all of it was held: one client's
 * 1 GB message took 1 GB of memory, and a hundred of them the process.
 */
export async function messageBytes(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let held = 0;
  for await (const chunk of stream) {
    if (held > maxBytes) continue;
    chunks.push(chunk as Buffer);
    held += (chunk as Buffer).length;
  }
  return Buffer.concat(chunks);
}

/** Publishes a received message to each of its hooks; the first failure is the reply. */
async function deliver(o: Listener, session: SMTPServerSession, raw: Buffer): Promise<void> {
  for (const rcpt of session.envelope.rcptTo) {
    const named = emailRecipient(rcpt.address);
    if (!named) throw reply(550, "5.1.1 no such hook address");
    const intake = await o.intake.receive({
      hookId: named.hookId,
      raw,
      contentType: "message/rfc822",
      event: undefined,
      delivery: undefined,
      idempotencyKey: undefined,
      credentials: mailCredentials(named.secret),
    });
    if (intake.kind === "refused") throw reply(550, "5.1.1 no such hook address");
    if (intake.kind === "ignored") continue;
    const values = mailContextValues(session.id, session.remoteAddress);
    await publishHookEvent(o, intake, values, AbortSignal.timeout(30_000));
  }
}

/**
 * The SMTP listener of this process, started as the app gets ready to listen (on the same host,
 * its port shared by every serving process as the HTTP port is) and closed with the app. Not
 * on Fastify's onListen, whose failures are only logged: a port another program took after the
 * supervisor's check served HTTP with email dead. Here the process's start fails, and says why.
 */
export function registerSmtp(app: FastifyInstance, options: SmtpOptions): void {
  let listener: { close(): Promise<void> } | undefined;
  const o: Listener = { ...options, log: app.log };
  app.addHook("onReady", async () => {
    listener = await startSmtp(o);
    app.log.info({ port: o.port, starttls: o.tls !== undefined }, "email in: SMTP listening");
  });
  app.addHook("onClose", async () => listener?.close());
}

async function startSmtp(o: Listener): Promise<{ close(): Promise<void> }> {
  const certificate =
    o.tls && new SmtpCertificate(o.tls, o.log, (pair) => server.updateSecureContext(pair));
  const share = addressShare(o.perAddress);
  const server: SMTPServer = new SMTPServer({
    banner: "Herald: mail to a hook's address becomes a notification",
    size: o.maxBytes,
    authOptional: true,
    disabledCommands: o.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    ...certificate?.initial(),
    logger: false,
    maxClients: 100,
    socketTimeout: 60_000,
    closeTimeout: 1_000,
    onConnect(session, done) {
      const wait = o.failures.blockedFor(session.remoteAddress);
      if (wait !== undefined)
        return done(reply(421, `4.7.0 too many failed attempts: retry in ${wait} s`));
      if (!share.admit(session))
        return done(
          reply(421, `4.7.0 at most ${o.perAddress} connections at once from one address`),
        );
      // A renewed certificate is taken before this client can ask for STARTTLS.
      void (certificate?.refresh() ?? Promise.resolve()).then(
        () => done(),
        () => done(),
      );
    },
    onClose(session) {
      share.closed(session);
    },
    onRcptTo(address, session, done) {
      o.intake.accepts(address.address).then(
        async (ok) => {
          if (ok) return done();
          await o.failures.failed(session.remoteAddress);
          done(reply(550, "5.1.1 no such hook address"));
        },
        (err: unknown) => done(smtpReply(err)),
      );
    },
    onData(stream, session, done) {
      messageBytes(stream, o.maxBytes)
        .then(async (raw) => {
          if (stream.sizeExceeded)
            throw reply(552, `5.3.4 a message is at most ${o.maxBytes} bytes`);
          await deliver(o, session, raw);
          done();
        })
        .catch((err: unknown) => {
          // Ours (an SMTP reply already), or a publish's error, said as one (and logged).
          if ((err as { responseCode?: number }).responseCode) return done(err as Error);
          o.log.warn({ err }, "a mail was not published");
          done(smtpReply(err));
        });
    },
  });
  // smtp-server says its socket's errors again, and one nobody hears would throw: a failed
  // listen is the start's to say, once, and what comes after is logged.
  let listening = false;
  server.on("error", (err) => listening && o.log.error({ err }, "the SMTP listener failed"));
  await new Promise<void>((resolve, reject) => {
    server.server.once("error", (err: NodeJS.ErrnoException) =>
      reject(listenFailure(err, o.host, o.port, "HERALD_SMTP_PORT")),
    );
    server.listen({ host: o.host, port: o.port, ...listenOptions }, () => resolve());
  });
  listening = true;
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
