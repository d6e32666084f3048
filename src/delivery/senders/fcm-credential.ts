/**
 * The FCM sender's OAuth access token, kept by the monotonic clock and renewable on demand.
 *
 * firebase-admin, google-auth-library and gtoken each keep the access token until five minutes
 * before its hour by the wall clock. A clock stepped back (NTP, a resumed virtual machine) has
 * them send it after Google let it go: FCM answers 401 UNAUTHENTICATED, and no cache lets go of it
 * (firebase-admin maps that answer to a configuration error). Here firebase-admin is told each
 * token expires at once, so it asks for it on every send; this keeps it, by
 * `performance.now()`, and `renew()` fetches another with a new google-auth-library client (whose
 * caches start empty), as the sender does when FCM refuses the token.
 */
import { readFileSync } from "node:fs";
import type { Agent } from "node:https";
import { type Credential, cert, type GoogleOAuthAccessToken } from "firebase-admin/app";
import { JWT, type JWTInput } from "google-auth-library";

/** What firebase-admin asks for with a service account. */
const scopes = [
  "https://www.googleapis.com/auth/cloud-platform",
  "https://www.googleapis.com/auth/firebase.messaging",
];
/** Renewed this long before the token's end, as Google's libraries do. */
const renewBeforeEndMs = 5 * 60_000;
/** Sends refused together share one new token: a renewal stands this long. */
const renewalStandsMs = 10_000;

interface Held {
  token: string;
  /** By `performance.now()`. */
  endsAt: number;
}

export class RenewableCredential implements Credential {
  readonly #account: JWTInput;
  readonly #agent: Agent;
  #held: Held | undefined;
  #fetching: Promise<Held> | undefined;
  #renewedAt = Number.NEGATIVE_INFINITY;

  /** The service account's Firebase project (the sends' URL names it). */
  readonly projectId: string;

  constructor(serviceAccountFile: string, agent: Agent) {
    this.#agent = agent;
    // firebase-admin reads and checks the file (a project id, a key, an email) as it did before.
    cert(serviceAccountFile, agent);
    this.#account = JSON.parse(readFileSync(serviceAccountFile, "utf8")) as JWTInput;
    this.projectId = this.#account.project_id as string;
  }

  async getAccessToken(): Promise<GoogleOAuthAccessToken> {
    let held = this.#held;
    if (!held || held.endsAt - performance.now() <= renewBeforeEndMs) held = await this.#fetch();
    // firebase-admin's own cache, by the wall clock, is kept empty: it asks on every send.
    return { access_token: held.token, expires_in: 0 };
  }

  /** A new token, for sends FCM refused the held one for (one per 10 s, shared). */
  async renew(): Promise<void> {
    if (performance.now() - this.#renewedAt > renewalStandsMs) {
      this.#renewedAt = performance.now();
      this.#held = undefined;
    }
    if (!this.#held) await this.#fetch();
  }

  /**
   * One fetch at a time, its token what it resolves with (a renewal may let go of what is held
   * meanwhile); one that failed leaves nothing held, and the next send asks again.
   */
  #fetch(): Promise<Held> {
    this.#fetching ??= (async () => {
      try {
        // A client of its own each time (firebase-admin's `cert()` is one per file, for good):
        // nothing in it is kept from the token before.
        const account = this.#account;
        const client = new JWT({
          email: account.client_email,
          key: account.private_key,
          keyId: account.private_key_id,
          scopes,
          transporterOptions: { agent: this.#agent },
        });
        const asked = performance.now();
        const { token } = await client.getAccessToken();
        const end = client.credentials.expiry_date;
        if (!token || end == null) throw new Error("Google's token service answered no token");
        this.#held = { token, endsAt: asked + (end - Date.now()) };
        return this.#held;
      } finally {
        this.#fetching = undefined;
      }
    })();
    return this.#fetching;
  }
}
