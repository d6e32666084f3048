/**
 * The files the settings name (an APNs key, an FCM service account, STARTTLS's key and
 * certificate), held to being readable before any serving process starts. A missing one made
 * every serving process die at start, each with a stack, until the supervisor gave up with
 * Node's `ENOENT: no such file or directory, open '/etc/herald/key.p8'`, which named no setting.
 */
import { readFileSync } from "node:fs";
import type { Config } from "../config.ts";

type FileSettings = Pick<Config, "apns" | "fcmServiceAccountFile" | "smtp">;

/** Each file setting in use: its variable and its path. */
function fileSettings(config: FileSettings): [string, string][] {
  const files: [string, string | undefined][] = [
    ["HERALD_APNS_KEY_FILE", config.apns?.keyFile],
    ["HERALD_FCM_SERVICE_ACCOUNT_FILE", config.fcmServiceAccountFile],
    ["HERALD_SMTP_TLS_KEY", config.smtp?.tls?.keyFile],
    ["HERALD_SMTP_TLS_CERT", config.smtp?.tls?.certFile],
  ];
  return files.filter((f): f is [string, string] => f[1] !== undefined);
}

/** Throws, naming the variable, the path and why, at the first file that cannot be read. */
export function checkSettingFiles(config: FileSettings): void {
  for (const [variable, path] of fileSettings(config)) {
    try {
      readFileSync(path);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const why =
        e.code === "ENOENT"
          ? "there is no such file"
          : e.code === "EACCES"
            ? "permission denied (Herald's user must be able to read it)"
            : e.code === "EISDIR"
              ? "it is a folder"
              : e.message;
      throw new Error(`${variable} names ${path}, which cannot be read: ${why}`);
    }
  }
}
