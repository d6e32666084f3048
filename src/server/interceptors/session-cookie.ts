/**
 * The web console's session cookie: read as a credential when a call carries no
 * `Authorization`, and set or cleared when a call started or ended a session. HttpOnly (page
 * scripts never see it), SameSite=Strict, Secure behind TLS, and accepted only from the
 * server's own origin, so that another site cannot make a signed-in browser call Herald.
 */
import type { Interceptor } from "@connectrpc/connect";
import { heraldError } from "../../errors.ts";
import { sessionChangeKey } from "../../services/context.ts";
import { rpcName } from "../authz.ts";

export const sessionCookie = "herald_session";
/** A console session's cookie lasts 30 days (the session itself until revoked or signed out). */
const maxAgeSeconds = 30 * 86_400;

/** The session secret from a `Cookie` header, if there is one. */
export function sessionFrom(cookieHeader: string | null): string | undefined {
  for (const part of cookieHeader?.split(";") ?? []) {
    const [name, ...value] = part.trim().split("=");
    if (name === sessionCookie) return value.join("=") || undefined;
  }
  return undefined;
}

/**
 * Whether a browser's call comes from a page of this server, for calls a browser may make with
 * the cookie (or that set it): `Origin` names the host it was sent to (or the public URL).
 * Browsers send `Origin` with every cross-site POST; where it is missing, `Sec-Fetch-Site` says
 * whether the page is ours. A call with neither is no browser's (curl), which sends no cookie
 * unless told to.
 */
export function sameOrigin(header: Headers, publicUrl: string | undefined): boolean {
  const origin = header.get("origin");
  if (!origin) {
    const site = header.get("sec-fetch-site");
    return site === null || site === "same-origin" || site === "none";
  }
  return originAllowed(origin, header.get("host"), publicUrl);
}

/**
 * Whether a page's origin is this server's: its scheme, host and port. The scheme is the public
 * URL's (https behind a TLS proxy; HERALD_PUBLIC_URL says so), or else http, the only one this
 * server speaks itself: a page served over plain http to the same host is another origin.
 */
export function originAllowed(
  origin: string,
  host: string | null | undefined,
  publicUrl: string | undefined,
): boolean {
  let page: URL;
  try {
    page = new URL(origin);
  } catch {
    return false;
  }
  const own = publicUrl === undefined ? undefined : new URL(publicUrl);
  if (own !== undefined && page.origin === own.origin) return true;
  return page.host === host && page.protocol === (own?.protocol ?? "http:");
}

/** The calls that set the session cookie. */
const startsSession = new Set([
  "herald.v1.AuthService/StartSession",
  "herald.v1.AccountService/CompleteOwnerSetup",
]);

export function createSessionCookieInterceptor(publicUrl: string | undefined): Interceptor {
  const secure = publicUrl?.startsWith("https://") ?? false;
  // Where the console is, said to a person who reached it another way (its address inside the
  // network, with HERALD_PUBLIC_URL the proxy's): "the console's own page" was no help there.
  const own = publicUrl
    ? `the console at ${new URL(publicUrl).origin} (HERALD_PUBLIC_URL)`
    : "the console's own page";
  return (next) => async (req) => {
    // Signing in from another site's page (login CSRF) is refused before anything happens.
    if (startsSession.has(rpcName(req.method)) && !sameOrigin(req.header, publicUrl)) {
      throw heraldError("permission_denied", `console sessions start from ${own}`);
    }
    const res = await next(req);
    const change = req.contextValues.get(sessionChangeKey);
    if (change?.started || change?.ended) {
      const https = secure || req.header.get("origin")?.startsWith("https://");
      const attributes = `Path=/; HttpOnly; SameSite=Strict${https ? "; Secure" : ""}`;
      res.header.append(
        "set-cookie",
        change.started
          ? `${sessionCookie}=${change.started}; Max-Age=${maxAgeSeconds}; ${attributes}`
          : `${sessionCookie}=; Max-Age=0; ${attributes}`,
      );
    }
    return res;
  };
}
