/**
 * STARTTLS's key and certificate, taken again when their files change. A certificate is renewed
 * while Herald runs (Let's Encrypt's every 60 days, certbot swapping the symlinks under live/),
 * so reading the files once at start would serve the old one until it expires.
 *
 * The files are looked at (two stats; lookers at the same moment share them) when a client
 * connects, before it can ask for STARTTLS. A changed pair is used only when it is a usable pair: a key that
 * does not match its certificate (a renewal caught between its two writes), or a file missing,
 * keeps the pair in use and is logged once, and the pair is tried again on a later connection.
 */

import { X509Certificate } from "node:crypto";
import { readFileSync, type Stats, statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import type { Log } from "../../domain/log.ts";
import { isCertificatesKey } from "../../ops/setting-files.ts";

export interface KeyPair {
  key: Buffer;
  cert: Buffer;
}

const one = (s: Stats) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
/** What the two files are now: a renewal changes an inode, a size or a time. */
const stampOf = (key: Stats, cert: Stats) => `${one(key)}|${one(cert)}`;

/** The certificate's last day, as a log says it. */
function expiresOf(cert: Buffer): string | undefined {
  try {
    return new Date(new X509Certificate(cert).validTo).toISOString();
  } catch {
    return undefined;
  }
}

export class SmtpCertificate {
  readonly #files: { keyFile: string; certFile: string };
  readonly #log: Log;
  readonly #use: (pair: KeyPair) => void;
  /** The files' stamps when last looked at, whether or not that pair was usable. */
  #seen = "";
  #looking: Promise<void> | undefined;

  constructor(
    files: { keyFile: string; certFile: string },
    log: Log,
    use: (pair: KeyPair) => void,
  ) {
    this.#files = files;
    this.#log = log;
    this.#use = use;
  }

  /** The pair to start with, its expiry logged (a missing file stops the start, as before). */
  initial(): KeyPair {
    const pair = {
      key: readFileSync(this.#files.keyFile),
      cert: readFileSync(this.#files.certFile),
    };
    this.#log.info({ expires: expiresOf(pair.cert) }, "email in: STARTTLS certificate loaded");
    this.#seen = stampOf(statSync(this.#files.keyFile), statSync(this.#files.certFile));
    return pair;
  }

  /** Takes a changed pair of files when it is usable; never throws. */
  refresh(): Promise<void> {
    if (this.#looking) return this.#looking;
    this.#looking = this.#look().finally(() => {
      this.#looking = undefined;
    });
    return this.#looking;
  }

  async #stamps(): Promise<string> {
    const [k, c] = await Promise.all([stat(this.#files.keyFile), stat(this.#files.certFile)]);
    return stampOf(k, c);
  }

  async #look(): Promise<void> {
    let seen: string;
    try {
      seen = await this.#stamps();
    } catch (err) {
      return this.#unusable(`missing: ${(err as Error).message}`);
    }
    if (seen === this.#seen) return;
    try {
      const [key, cert] = await Promise.all([
        readFile(this.#files.keyFile),
        readFile(this.#files.certFile),
      ]);
      createSecureContext({ key, cert });
      if (!isCertificatesKey(key, cert)) throw new Error("the key is not the certificate's");
      this.#use({ key, cert });
      this.#seen = seen;
      this.#log.info({ expires: expiresOf(cert) }, "email in: STARTTLS certificate renewed");
    } catch (err) {
      this.#unusable((err as Error).message, seen);
    }
  }

  /** Logs once per state of the files that cannot be used; the pair in use stays. */
  #unusable(why: string, seen = `unusable:${why}`): void {
    if (seen === this.#seen) return;
    this.#seen = seen;
    this.#log.warn(
      { reason: why },
      "email in: the STARTTLS key and certificate files changed but cannot be used; the previous pair stays in use",
    );
  }
}
