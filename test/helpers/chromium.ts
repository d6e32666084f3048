/**
 * Where a Chromium is on this machine: HERALD_CHROMIUM, or Debian's `chromium` package (the
 * only browser this project's machines can install: Playwright's own download is unreachable).
 */
import { existsSync } from "node:fs";
import type { Page } from "playwright-core";

export function findChromium(): string | undefined {
  const candidates = [
    process.env.HERALD_CHROMIUM,
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** Flags for a headless Chromium on a machine with no network but loopback. */
export const chromiumArgs = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Signs the page in to the console at `url` with a password, as a person would. */
export async function signInToConsole(page: Page, url: string, email: string, password: string) {
  await page.goto(`${url}/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Notifications" }).waitFor();
}
