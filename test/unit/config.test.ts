/** Settings read from the environment: the fan-out's chunk (HERALD_FAN_OUT_CHUNK), the listening ports, the public URL, the VAPID subject, the owner's email, APNs, VAPID's keys, Web Push's hosts, the log level, DATABASE_URL, the switches, the trusted proxies, email's domain, the push-token keys. */
import { describe, expect, it } from "vitest";
import webpush from "web-push";
import { loadConfig } from "../../src/config.ts";

describe("HERALD_FAN_OUT_CHUNK", () => {
  it("is 1,000 deliveries a statement unless set", () => {
    expect(loadConfig({}).fanOutChunk).toBe(1000);
    expect(loadConfig({ HERALD_FAN_OUT_CHUNK: "2500" }).fanOutChunk).toBe(2500);
  });

  it("refuses a chunk under 100 deliveries, naming the setting (a fan-out of one per statement starves every other)", () => {
    expect(() => loadConfig({ HERALD_FAN_OUT_CHUNK: "1" })).toThrow(/HERALD_FAN_OUT_CHUNK/);
    expect(() => loadConfig({ HERALD_FAN_OUT_CHUNK: "lots" })).toThrow(/HERALD_FAN_OUT_CHUNK/);
  });
});

describe("the listening ports", () => {
  it("are each a port of their own: the API's and email's share theirs by SO_REUSEPORT, and the kernel would mix them", () => {
    expect(() => loadConfig({ HERALD_SMTP_PORT: "8080" })).toThrow(
      "HERALD_SMTP_PORT is HERALD_PORT's port (8080): each listener needs one of its own",
    );
    expect(() => loadConfig({ HERALD_PORT: "2525", HERALD_METRICS_PORT: "2525" })).toThrow(
      /HERALD_METRICS_PORT is HERALD_PORT's port \(2525\)/,
    );
    expect(() => loadConfig({ HERALD_SMTP_PORT: "9464", HERALD_METRICS_PORT: "9464" })).toThrow(
      /HERALD_METRICS_PORT is HERALD_SMTP_PORT's port \(9464\)/,
    );
    const config = loadConfig({ HERALD_SMTP_PORT: "2525", HERALD_METRICS_PORT: "9464" });
    expect([config.port, config.smtp?.port, config.metricsPort]).toEqual([8080, 2525, 9464]);
    expect([loadConfig({}).smtp, loadConfig({}).metricsPort]).toEqual([undefined, undefined]);
    // 0 asks for a free port, each its own.
    expect(loadConfig({ HERALD_PORT: "0", HERALD_SMTP_PORT: "0" }).smtp?.port).toBe(0);
  });
});

describe("HERALD_PUBLIC_URL", () => {
  it("is a whole http(s) URL: without its scheme the links it printed went nowhere", () => {
    expect(() => loadConfig({ HERALD_PUBLIC_URL: "herald.example.com" })).toThrow(
      'HERALD_PUBLIC_URL is "herald.example.com", which is not a URL: give it whole, as https://herald.example.com',
    );
    // A host and port parse as a scheme of their own.
    expect(() => loadConfig({ HERALD_PUBLIC_URL: "herald.example.com:8443" })).toThrow(
      'HERALD_PUBLIC_URL is "herald.example.com:8443": it starts with https:// or http://, as https://herald.example.com',
    );
    expect(() => loadConfig({ HERALD_PUBLIC_URL: "https://h.example.com/?a=1" })).toThrow(
      /a query, a fragment or a user name has no place in it/,
    );
    expect(loadConfig({ HERALD_PUBLIC_URL: "https://herald.example.com" }).publicUrl).toBe(
      "https://herald.example.com",
    );
    expect(loadConfig({ HERALD_PUBLIC_URL: "http://10.0.0.5:8080/" }).publicUrl).toBe(
      "http://10.0.0.5:8080/",
    );
    expect(loadConfig({}).publicUrl).toBeUndefined();
  });
});

describe("HERALD_VAPID_SUBJECT", () => {
  it("is a mailto: or https: contact; unset, the public URL when it is an https:// name", () => {
    expect(() => loadConfig({ HERALD_VAPID_SUBJECT: "ops@example.net" })).toThrow(
      'HERALD_VAPID_SUBJECT is "ops@example.net": Web Push asks for a mailto: address or an https: URL, as mailto:ops@example.com',
    );
    expect(() => loadConfig({ HERALD_VAPID_SUBJECT: "http://example.net" })).toThrow(
      /HERALD_VAPID_SUBJECT is "http:\/\/example.net"/,
    );
    const subject = (env: Record<string, string>) => loadConfig(env).vapidSubject;
    expect(subject({ HERALD_VAPID_SUBJECT: "https://ops.example.net/contact" })).toBe(
      "https://ops.example.net/contact",
    );
    expect(subject({ HERALD_PUBLIC_URL: "https://push.example.net:8443/herald" })).toBe(
      "https://push.example.net:8443",
    );
    // Names and addresses no push service reaches keep the fallback (the owner's email is
    // never sent to the push services unasked).
    for (const url of [
      "http://push.example.net",
      "https://localhost:8443",
      "https://herald.local",
      "https://10.0.0.5",
      "https://nas",
    ]) {
      expect(subject({ HERALD_PUBLIC_URL: url, HERALD_OWNER_EMAIL: "me@example.net" })).toBe(
        "mailto:owner@localhost",
      );
    }
  });
});

describe("HERALD_OWNER_EMAIL", () => {
  it("is an email address, as the console's sign-in field asks", () => {
    expect(() => loadConfig({ HERALD_OWNER_EMAIL: "admin" })).toThrow(
      'HERALD_OWNER_EMAIL is "admin", not an email address: the console signs the owner in by one, as owner@example.com',
    );
    expect(() => loadConfig({ HERALD_OWNER_EMAIL: "me @example.net" })).toThrow(
      /HERALD_OWNER_EMAIL/,
    );
    expect(loadConfig({}).owner.email).toBe("owner@localhost");
    expect(loadConfig({ HERALD_OWNER_EMAIL: "ops+herald@example.net" }).owner.email).toBe(
      "ops+herald@example.net",
    );
  });
});

describe("APNs' settings", () => {
  const four = {
    HERALD_APNS_KEY_FILE: "/etc/herald/AuthKey_ABC1234567.p8",
    HERALD_APNS_KEY_ID: "ABC1234567",
    HERALD_APNS_TEAM_ID: "TEAM123456",
    HERALD_APNS_BUNDLE_ID: "dev.herald.app",
  };

  it("are all four or none: three of four name the one missing", () => {
    expect(loadConfig({}).apns).toBeUndefined();
    const { HERALD_APNS_TEAM_ID: _, ...three } = four;
    expect(() => loadConfig(three)).toThrow(
      "APNs needs HERALD_APNS_TEAM_ID too (docs/delivery.md)",
    );
    expect(loadConfig(four).apns).toMatchObject({ teamId: "TEAM123456", sandbox: false });
  });

  it("take development for sandbox, as Xcode says it, and refuse an environment APNs has not", () => {
    expect(loadConfig({ ...four, HERALD_APNS_ENV: "sandbox" }).apns?.sandbox).toBe(true);
    expect(loadConfig({ ...four, HERALD_APNS_ENV: "development" }).apns?.sandbox).toBe(true);
    expect(loadConfig({ ...four, HERALD_APNS_ENV: "production" }).apns?.sandbox).toBe(false);
    expect(() => loadConfig({ ...four, HERALD_APNS_ENV: "dev" })).toThrow(
      'HERALD_APNS_ENV is "dev": production (App Store and TestFlight builds, the default) or sandbox (development builds)',
    );
  });
});

describe("VAPID's keys", () => {
  it("are set together, as a key pair, or not at all", () => {
    const pair = webpush.generateVAPIDKeys();
    const other = webpush.generateVAPIDKeys();
    expect(loadConfig({}).vapid).toBeUndefined();
    expect(
      loadConfig({
        HERALD_VAPID_PUBLIC_KEY: pair.publicKey,
        HERALD_VAPID_PRIVATE_KEY: pair.privateKey,
      }).vapid,
    ).toEqual(pair);
    expect(() => loadConfig({ HERALD_VAPID_PUBLIC_KEY: pair.publicKey })).toThrow(
      "HERALD_VAPID_PUBLIC_KEY and HERALD_VAPID_PRIVATE_KEY are set together, or neither (then a pair is made in the data directory)",
    );
    for (const privateKey of [other.privateKey, "not-a-key"]) {
      expect(() =>
        loadConfig({
          HERALD_VAPID_PUBLIC_KEY: pair.publicKey,
          HERALD_VAPID_PRIVATE_KEY: privateKey,
        }),
      ).toThrow(/are no P-256 key pair in base64url/);
    }
  });
});

describe("HERALD_WEB_PUSH_HOSTS", () => {
  it("takes host names alone: one with a scheme or a port matched no endpoint", () => {
    const hosts = (value: string) => loadConfig({ HERALD_WEB_PUSH_HOSTS: value }).webPushHosts;
    expect(hosts("push.example.net, *.push.example.org,127.0.0.1,[::1],::1,localhost")).toEqual([
      ...loadConfig({}).webPushHosts,
      "push.example.net",
      "*.push.example.org",
      "127.0.0.1",
      "[::1]",
      "::1",
      "localhost",
    ]);
    for (const bad of [
      "https://push.example.net",
      "push.example.net:8443",
      "push.example.net/wp",
    ]) {
      expect(() => hosts(`push.example.org,${bad}`)).toThrow(
        `HERALD_WEB_PUSH_HOSTS has "${bad}", which is no host name: hosts alone, as push.example.com or *.example.com`,
      );
    }
  });
});

describe("HERALD_LOG_LEVEL", () => {
  it("is one of pino's levels, named when it is not (verbose stopped the start with a stack)", () => {
    expect(loadConfig({}).logLevel).toBe("info");
    expect(loadConfig({ HERALD_LOG_LEVEL: "DEBUG" }).logLevel).toBe("debug");
    expect(() => loadConfig({ HERALD_LOG_LEVEL: "verbose" })).toThrow(
      'HERALD_LOG_LEVEL must be fatal, error, warn, info, debug, trace or silent, got "verbose"',
    );
  });
});

describe("DATABASE_URL", () => {
  it("is a PostgreSQL URL naming its database, and an unusable one is never said back", () => {
    const secret = "s3cret-Pa55";
    for (const [url, said] of [
      [
        `foo:${secret}`,
        "DATABASE_URL is a foo: URL: give it as postgres://user:password@host:5432/database",
      ],
      [
        `localhost:5432/${secret}`,
        "DATABASE_URL is a localhost: URL: give it as postgres://user:password@host:5432/database",
      ],
      [
        `postgres://u:${secret}@db:5432/`,
        "DATABASE_URL names no database: give it as postgres://user:password@host:5432/database",
      ],
      [
        `${secret} nope`,
        "DATABASE_URL is not a URL: give it as postgres://user:password@host:5432/database",
      ],
    ]) {
      let message = "";
      try {
        loadConfig({ DATABASE_URL: url });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(said);
      expect(message).not.toContain(secret);
    }
    for (const url of [
      "postgres://herald:pw@db.internal:5432/herald",
      "postgresql://postgres@127.0.0.1/herald?sslmode=require",
      "postgres:///herald?host=/var/run/postgresql",
    ]) {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(url);
    }
    expect(loadConfig({}).databaseUrl).toBeUndefined();
  });
});

describe("the switches", () => {
  it("take 1/0, true/false, yes/no and on/off, and name themselves on another word", () => {
    expect(loadConfig({}).signupEnabled).toBe(false);
    for (const on of ["1", "true", "TRUE", "yes", "on"]) {
      expect(loadConfig({ HERALD_SIGNUP: on }).signupEnabled).toBe(true);
    }
    expect(loadConfig({}).reflection).toBe(true);
    for (const off of ["0", "false", "no", "Off"]) {
      expect(loadConfig({ HERALD_REFLECTION: off }).reflection).toBe(false);
    }
    expect(() => loadConfig({ HERALD_SIGNUP: "open" })).toThrow(
      'HERALD_SIGNUP is 1 or 0 (true or false, yes or no, on or off), got "open"',
    );
  });
});

describe("HERALD_TRUST_PROXY", () => {
  it("names proxies as proxy-addr takes them, or a hop count; anything else is named", () => {
    const proxies = (value: string) => loadConfig({ HERALD_TRUST_PROXY: value }).trustProxy;
    expect(proxies("")).toBe(false);
    expect(proxies("2")).toBe(2);
    const good = "loopback, 10.0.0.0/8,192.168.1.10, fd00::/8, 172.16.0.0/255.240.0.0, ::1";
    expect(proxies(good)).toBe(good);
    expect(() => proxies("yes")).toThrow(
      'HERALD_TRUST_PROXY must name the proxies (addresses, CIDR ranges, loopback, linklocal, uniquelocal) or a hop count ("yes" is none)',
    );
    expect(() => proxies("10.0.0.0/33")).toThrow(/"10.0.0.0\/33" is none/);
    expect(() => proxies("*")).toThrow(/or a hop count$/);
  });
});

describe("HERALD_SMTP_DOMAIN", () => {
  it("is a domain, the name after the @ of the hooks' addresses", () => {
    const smtp = (domain: string) =>
      loadConfig({ HERALD_SMTP_PORT: "2525", HERALD_SMTP_DOMAIN: domain }).smtp?.domain;
    expect(smtp("hooks.example.net")).toBe("hooks.example.net");
    for (const bad of ["https://hooks.example.net", "hooks.example.net:25", "@example.net"]) {
      expect(() => smtp(bad)).toThrow(
        `HERALD_SMTP_DOMAIN is "${bad}", not a domain: the name after the @ of the hooks' addresses, as hooks.example.com`,
      );
    }
  });
});

describe("HERALD_TOKEN_KEYS", () => {
  it("holds 32-byte keys, and says which one is not", () => {
    const key = (bytes: number) => Buffer.alloc(bytes, 7).toString("base64");
    const ring = (keys: string, indexKey = key(32)) =>
      loadConfig({ HERALD_TOKEN_KEYS: keys, HERALD_TOKEN_INDEX_KEY: indexKey }).pushTokenKeys;
    expect(ring(`k2:${key(32)},k1:${key(32)}`)).toEqual({
      keys: `k2:${key(32)},k1:${key(32)}`,
      indexKey: key(32),
    });
    expect(() => ring(`k2:${key(32)},k1:${key(16)}`)).toThrow(
      "HERALD_TOKEN_KEYS: key k1 is 16 bytes, not 32 (base64 of 32 random bytes: openssl rand -base64 32)",
    );
    expect(() => ring(`k1:${key(32)}`, "secret")).toThrow(
      /^HERALD_TOKEN_INDEX_KEY is 4 bytes, not 32/,
    );
    expect(() => ring("just-a-key")).toThrow("HERALD_TOKEN_KEYS entries are id:base64key");
  });
});
