/**
 * A file a setting names that cannot be read (an APNs key not copied yet, a certificate in
 * another folder), or that does not hold what its setting wants (a service account cut short in
 * a paste, a certificate's key from another renewal), stops `npm start` at once, naming the
 * variable, the path and why, before any serving process starts and before anything is made.
 * Before, each serving process died at start with a stack until the supervisor gave up, on
 * Node's `ENOENT: no such file or directory, open …` or firebase-admin's "Failed to parse private
 * key"; and an APNs key that was no key started, said iOS was ready, and failed every push.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { selfSigned } from "../helpers/certificates.ts";
import { launchHerald, spawnHerald } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const apns = {
  HERALD_APNS_KEY_ID: "ABC1234567",
  HERALD_APNS_TEAM_ID: "TEAM123456",
  HERALD_APNS_BUNDLE_ID: "dev.herald.app",
};

describe("files named by the settings", () => {
  it("stop the start, naming the variable, when one cannot be read", async () => {
    const dir = tempDir("herald-setting-files-");
    const missing = launchHerald({
      HERALD_DATA_DIR: dir,
      HERALD_APNS_KEY_FILE: `${dir}/AuthKey.p8`,
      ...apns,
    });
    expect(await missing.exited).toBe(1);
    expect(missing.stderr()).toContain(
      `herald failed to start: HERALD_APNS_KEY_FILE names ${dir}/AuthKey.p8, which cannot be read: there is no such file`,
    );
    expect(missing.stdout()).not.toContain("serving process");

    const folder = launchHerald({
      HERALD_DATA_DIR: dir,
      HERALD_SMTP_PORT: "2599",
      HERALD_SMTP_TLS_KEY: dir,
      HERALD_SMTP_TLS_CERT: dir,
    });
    expect(await folder.exited).toBe(1);
    expect(folder.stderr()).toContain(
      `herald failed to start: HERALD_SMTP_TLS_KEY names ${dir}, which cannot be read: it is a folder`,
    );
  }, 60_000);

  it("stop the start, naming the variable, when one does not hold what its setting wants", async () => {
    const dir = tempDir("herald-setting-contents-");
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const pem = (type: "ec" | "rsa") =>
      (type === "ec"
        ? generateKeyPairSync("ec", { namedCurve: "P-256" })
        : generateKeyPairSync("rsa", { modulusLength: 2048 })
      ).privateKey.export({ type: "pkcs8", format: "pem" }) as string;
    const account = (fields: object) =>
      JSON.stringify({
        type: "service_account",
        project_id: "p",
        client_email: "a@p.test",
        ...fields,
      });
    await selfSigned(join(dir, "one.key"), join(dir, "one.crt"), "one");
    await selfSigned(join(dir, "two.key"), join(dir, "two.crt"), "two", "ecdsa");
    const data = join(dir, "data");
    const cases: [Record<string, string>, string][] = [
      [
        { HERALD_FCM_SERVICE_ACCOUNT_FILE: file("cut.json", '{"type": "service_account", "pro') },
        `HERALD_FCM_SERVICE_ACCOUNT_FILE names ${dir}/cut.json, but it is not a Firebase service account's JSON key: it is not JSON`,
      ],
      [
        { HERALD_FCM_SERVICE_ACCOUNT_FILE: file("keyless.json", account({})) },
        `HERALD_FCM_SERVICE_ACCOUNT_FILE names ${dir}/keyless.json, but it is not a Firebase service account's JSON key: it has no private_key`,
      ],
      [
        { HERALD_FCM_SERVICE_ACCOUNT_FILE: file("bad.json", account({ private_key: "MIIE…" })) },
        `HERALD_FCM_SERVICE_ACCOUNT_FILE names ${dir}/bad.json, but it is not a Firebase service account's JSON key: its private_key is not a private key in PEM`,
      ],
      [
        {
          HERALD_FCM_SERVICE_ACCOUNT_FILE: file(
            "google-services.json",
            JSON.stringify({
              project_info: { project_id: "p" },
              client: [],
              configuration_version: "1",
            }),
          ),
        },
        `HERALD_FCM_SERVICE_ACCOUNT_FILE names ${dir}/google-services.json, but it is not a Firebase service account's JSON key: it is the Android app's google-services.json; make a key in the Firebase console, Project settings, Service accounts, "Generate new private key"`,
      ],
      [
        { HERALD_APNS_KEY_FILE: file("AuthKey.p8", "ABC1234567"), ...apns },
        `HERALD_APNS_KEY_FILE names ${dir}/AuthKey.p8, but it is not an APNs signing key (the AuthKey_….p8 file from Apple's developer site)`,
      ],
      [
        { HERALD_APNS_KEY_FILE: file("rsa.p8", pem("rsa")), ...apns },
        `HERALD_APNS_KEY_FILE names ${dir}/rsa.p8, but it is not an APNs signing key (the AuthKey_….p8 file from Apple's developer site): not a P-256 key`,
      ],
      [
        {
          HERALD_SMTP_PORT: "2599",
          HERALD_SMTP_TLS_KEY: join(dir, "two.key"),
          HERALD_SMTP_TLS_CERT: join(dir, "one.crt"),
        },
        `HERALD_SMTP_TLS_KEY (${dir}/two.key) is not the key of HERALD_SMTP_TLS_CERT's certificate (${dir}/one.crt)`,
      ],
      [
        {
          HERALD_SMTP_PORT: "2599",
          HERALD_SMTP_TLS_KEY: join(dir, "one.crt"),
          HERALD_SMTP_TLS_CERT: join(dir, "one.key"),
        },
        `HERALD_SMTP_TLS_KEY names ${dir}/one.crt, but it is not a private key in PEM`,
      ],
    ];
    for (const [env, said] of cases) {
      const proc = launchHerald({ HERALD_DATA_DIR: data, ...env });
      expect(await proc.exited).toBe(1);
      expect(proc.stderr()).toContain(`herald failed to start: ${said}`);
      expect(proc.stdout()).not.toContain("serving process");
    }
    // Nothing was made: not even the database.
    expect(existsSync(join(data, "pg"))).toBe(false);

    // What the real files hold passes: an APNs .p8, a service account, a key and its certificate.
    const good = await spawnHerald({
      HERALD_DATA_DIR: data,
      HERALD_PROCESSES: "1",
      HERALD_APNS_KEY_FILE: file("AuthKey_ABC1234567.p8", pem("ec")),
      ...apns,
      HERALD_FCM_SERVICE_ACCOUNT_FILE: file("account.json", account({ private_key: pem("rsa") })),
      HERALD_SMTP_PORT: "0",
      HERALD_SMTP_TLS_KEY: join(dir, "two.key"),
      HERALD_SMTP_TLS_CERT: join(dir, "two.crt"),
    });
    expect(good.stdout()).toContain("Push: Web Push, iOS (APNs) and Android (FCM) ready");
    good.child.kill("SIGTERM");
    expect(await good.exited).toBe(0);
  }, 90_000);
});
