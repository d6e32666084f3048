/**
 * The files the settings name (an APNs key, an FCM service account, STARTTLS's key and
 * certificate), held to being readable, and to holding what their setting wants, before any
 * serving process starts. A missing one made every serving process die at start, each with a
 * stack, until the supervisor gave up with Node's `ENOENT: no such file or directory, open
 * '/etc/herald/key.p8'`, which named no setting. A malformed service account did the same on
 * firebase-admin's "Failed to parse private key", after the first start had made its key; a
 * malformed APNs key started and said iOS was ready, and every iPhone's push then failed.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Config } from "../config.ts";

type FileSettings = Pick<Config, "apns" | "fcmServiceAccountFile" | "smtp">;

/** Why the bytes are not what the setting wants, or undefined when they are. */
type Content = (bytes: Buffer) => string | undefined;

/** The PEM's private key, or undefined when Node cannot read one (an encrypted one: no passphrase is set). */
function privateKey(pem: string | Buffer): KeyObject | undefined {
  try {
    return createPrivateKey(pem);
  } catch {
    return undefined;
  }
}

/** Apple's .p8: an EC private key on P-256, in PEM. */
const apnsKey: Content = (bytes) => {
  const what = "it is not an APNs signing key (the AuthKey_….p8 file from Apple's developer site)";
  const key = privateKey(bytes);
  if (!key) return what;
  return key.asymmetricKeyDetails?.namedCurve === "prime256v1"
    ? undefined
    : `${what}: not a P-256 key`;
};

/** A Google service account's JSON key: what firebase-admin and Google's token service need. */
const serviceAccount: Content = (bytes) => {
  const what = "it is not a Firebase service account's JSON key";
  let account: Record<string, unknown>;
  try {
    account = JSON.parse(bytes.toString("utf8"));
  } catch {
    return `${what}: it is not JSON`;
  }
  if (typeof account !== "object" || account === null) return `${what}: it is not a JSON object`;
  // The Android app's own Firebase file, which every Android project has at hand.
  if ("project_info" in account && "client" in account) {
    return `${what}: it is the Android app's google-services.json; make a key in the Firebase console, Project settings, Service accounts, "Generate new private key"`;
  }
  for (const field of ["project_id", "client_email", "private_key"]) {
    if (typeof account[field] !== "string" || account[field] === "") {
      return `${what}: it has no ${field}`;
    }
  }
  return privateKey(account.private_key as string)
    ? undefined
    : `${what}: its private_key is not a private key in PEM`;
};

const tlsKey: Content = (bytes) =>
  privateKey(bytes) ? undefined : "it is not a private key in PEM";

const tlsCert: Content = (bytes) => {
  try {
    new X509Certificate(bytes);
    return undefined;
  } catch {
    return "it is not a certificate in PEM";
  }
};

/** Each file setting in use: its variable, its path and what it must hold. */
function fileSettings(config: FileSettings): [string, string, Content][] {
  const files: [string, string | undefined, Content][] = [
    ["HERALD_APNS_KEY_FILE", config.apns?.keyFile, apnsKey],
    ["HERALD_FCM_SERVICE_ACCOUNT_FILE", config.fcmServiceAccountFile, serviceAccount],
    ["HERALD_SMTP_TLS_KEY", config.smtp?.tls?.keyFile, tlsKey],
    ["HERALD_SMTP_TLS_CERT", config.smtp?.tls?.certFile, tlsCert],
  ];
  return files.filter((f): f is [string, string, Content] => f[1] !== undefined);
}

/** Why a file cannot be read, in words. */
function unreadable(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === "ENOENT") return "there is no such file";
  if (e.code === "EACCES") return "permission denied (Herald's user must be able to read it)";
  if (e.code === "EISDIR") return "it is a folder";
  return e.message;
}

/**
 * Throws, naming the variable, the path and why, at the first file that cannot be read or does
 * not hold what its setting wants; then at STARTTLS's key and certificate when they are no pair.
 */
export function checkSettingFiles(config: FileSettings): void {
  // Each file read once: the pair check below takes STARTTLS's from here.
  const read = new Map<string, Buffer>();
  for (const [variable, path, content] of fileSettings(config)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      throw new Error(`${variable} names ${path}, which cannot be read: ${unreadable(err)}`);
    }
    const why = content(bytes);
    if (why) throw new Error(`${variable} names ${path}, but ${why}`);
    read.set(variable, bytes);
  }
  const tls = config.smtp?.tls;
  const [key, cert] = [read.get("HERALD_SMTP_TLS_KEY"), read.get("HERALD_SMTP_TLS_CERT")];
  if (tls && key && cert && !isCertificatesKey(key, cert)) {
    throw new Error(
      `HERALD_SMTP_TLS_KEY (${tls.keyFile}) is not the key of HERALD_SMTP_TLS_CERT's certificate (${tls.certFile})`,
    );
  }
}

/**
 * Whether `key` is the private key of the (first) certificate in `cert`. TLS's own check is not
 * enough: it takes an ECDSA key beside an RSA certificate (certbot 2 renews to ECDSA) as a
 * second pair missing its certificate, and every handshake then fails.
 */
export function isCertificatesKey(key: Buffer, cert: Buffer): boolean {
  return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
}
