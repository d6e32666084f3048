/**
 * Backups and restores (issue "Run it unattended"): `npm run backup -- FILE` beside a running
 * server, `npm run restore -- FILE` into a new data directory, and the restored Herald has the
 * notifications, the API key, the webhook and the browser device, whose stored subscription
 * still opens (the key files came back) and whose pushes carry the same VAPID key.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { extractArchive, writeArchive } from "../../src/ops/archive.ts";
import { testCertificate } from "../fakes/tls.ts";
import { type FakeWebPush, startFakeWebPush } from "../fakes/web-push-server.ts";
import { pushDevice } from "../helpers/accounts.ts";
import { body } from "../helpers/http.ts";
import { runOperator, spawnHerald, waitForKey } from "../helpers/process.ts";
import { waitFor } from "../helpers/wait.ts";

const work = mkdtempSync(join(tmpdir(), "herald-backup-test-"));
let fake: FakeWebPush;
let env: Record<string, string>;
beforeAll(async () => {
  fake = await startFakeWebPush();
  const ca = join(work, "push-ca.pem");
  writeFileSync(ca, (await testCertificate()).cert);
  env = {
    HERALD_PROCESSES: "1",
    HERALD_OWNER_PASSWORD: "backup test password",
    HERALD_WEB_PUSH_HOSTS: "127.0.0.1",
    HERALD_WEB_PUSH_ALLOW_PRIVATE: "1",
    HERALD_WEBHOOK_ALLOW_PRIVATE: "1",
    NODE_EXTRA_CA_CERTS: ca,
  };
});
afterAll(async () => {
  await fake.close();
  rmSync(work, { recursive: true, force: true });
});

const operator = (dataDir: string, ...args: string[]) =>
  runOperator(args, { ...env, DATABASE_URL: "", HERALD_DATA_DIR: dataDir });

/** The archive again, with a line no table takes at the end of the notifications' copy. */
async function brokenCopyOf(archive: string): Promise<string> {
  const dir = join(work, "broken");
  const names = await extractArchive(archive, dir);
  appendFileSync(join(dir, "tables", "notification.copy"), "not a row\n");
  const broken = join(work, "broken.tar.gz");
  await writeArchive(
    broken,
    names.map((n): [string, string] => [n, join(dir, n)]),
  );
  return broken;
}

describe("npm run backup and restore", () => {
  it("round-trips notifications, keys, webhooks and devices whose tokens still open", async () => {
    const first = join(work, "first");
    const a = await spawnHerald({ ...env, HERALD_DATA_DIR: first });
    const apiKey = await waitForKey(a);
    const auth = { authorization: `Bearer ${apiKey}` };
    const { token } = await body(
      await fetch(`${a.url}/v1/auth/login`, {
        method: "POST",
        body: JSON.stringify({ email: "owner@localhost", password: env.HERALD_OWNER_PASSWORD }),
      }),
    );
    const owner = {
      email: "owner@localhost",
      password: env.HERALD_OWNER_PASSWORD as string,
      token,
    };
    const sub = fake.subscribe();
    await pushDevice(a, owner, "web", {
      case: "webPush",
      value: { endpoint: sub.endpoint, p256dh: sub.p256dh, auth: sub.auth },
    });
    const before = await body(
      await fetch(`${a.url}/v1/notify`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ title: "before the backup" }),
      }),
    );
    const hook = await fetch(`${a.url}/v1/webhooks`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", event_types: ["delivery.failed"] }),
    });
    expect(hook.status).toBe(200);
    const pushes = () => fake.received.filter((r) => r.subscription === sub.id);
    await waitFor(() => pushes().length === 1);
    expect(pushes()).toHaveLength(1);

    // While the server runs.
    const archive = join(work, "herald.tar.gz");
    const backup = await operator(first, "ops/backup", archive);
    expect(backup.status, backup.stderr).toBe(0);
    expect(backup.stdout).toMatch(/^Backed up \d+ tables and 2 key file\(s\) to /);
    expect(statSync(archive).mode & 0o777).toBe(0o600);
    a.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);

    // A restore that fails half-way (a row its table will not take, found in the load) leaves
    // nothing of itself: the same data directory takes the good archive next.
    const broken = await brokenCopyOf(archive);
    const second = join(work, "second");
    const failed = await operator(second, "ops/restore", broken);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/^restore failed: .*notification/m);
    expect(existsSync(second)).toBe(false);

    const restore = await operator(second, "ops/restore", archive);
    expect(restore.status, restore.stderr).toBe(0);
    // Never over an existing data directory.
    const again = await operator(second, "ops/restore", archive);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/restore failed: .* exists: restore into a new data directory/);

    const b = await spawnHerald({ ...env, HERALD_DATA_DIR: second });
    expect(b.stdout()).not.toContain("HERALD_API_KEY=");
    const old = await fetch(`${b.url}/v1/notifications/${before.id}`, { headers: auth });
    expect(old.status).toBe(200);
    expect((await body(old)).title).toBe("before the backup");
    const hooks = await body(await fetch(`${b.url}/v1/webhooks`, { headers: auth }));
    expect(hooks.endpoints.map((e: { url: string }) => e.url)).toEqual(["http://127.0.0.1:9/hook"]);
    const after = await fetch(`${b.url}/v1/notify`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ title: "after the restore" }),
    });
    expect(after.status).toBe(202);
    await waitFor(() => pushes().length === 2);
    expect(pushes().map((p) => p.payload.title)).toEqual([
      "before the backup",
      "after the restore",
    ]);
    expect(pushes()[1]?.vapid.k).toBe(pushes()[0]?.vapid.k);
    b.child.kill("SIGTERM");
    expect(await b.exited).toBe(0);
  }, 120_000);

  it("onto a full disk: fails, says where and why, and leaves nothing behind", async () => {
    const dir = join(work, "full");
    const a = await spawnHerald({ ...env, HERALD_DATA_DIR: dir });
    await waitForKey(a);
    a.child.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    const target = join(work, "full-target");
    mkdirSync(target);
    const archive = join(target, "herald.tar.gz");
    // The archive is written as FILE.partial: there, every write fails with ENOSPC.
    symlinkSync("/dev/full", `${archive}.partial`);
    const scratch = join(work, "full-tmp");
    mkdirSync(scratch);
    const backup = await runOperator(["ops/backup", archive], {
      ...env,
      DATABASE_URL: "",
      HERALD_DATA_DIR: dir,
      TMPDIR: scratch,
    });
    expect(backup.status, backup.stderr).toBe(1);
    expect(backup.stderr).toContain(`backup failed: writing ${archive}: ENOSPC`);
    expect(backup.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(readdirSync(target)).toEqual([]);
    expect(readdirSync(scratch)).toEqual([]);
    expect(existsSync(join(dir, "pg", "postmaster.pid"))).toBe(false);
  }, 120_000);

  it("without a usable TMPDIR: backup and restore say so, without a stack", async () => {
    for (const command of ["backup", "restore"]) {
      const run = await runOperator([`ops/${command}`, join(work, "never.tar.gz")], {
        ...env,
        TMPDIR: join(work, "no-such-dir"),
      });
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toContain(`${command} failed: ENOENT`);
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it("with a data directory that cannot be made: says so at once, not in Node's endless loop", async () => {
    // Node's recursive mkdir loops, deaf to signals, where a folder cannot hold another (/proc):
    // such a run is killed at 15 s and fails here.
    const run = await runOperator(
      ["ops/backup", join(work, "never.tar.gz")],
      { ...env, DATABASE_URL: "", HERALD_DATA_DIR: "/proc/herald-backup-data" },
      10_000,
    );
    expect(run.signal, "killed at its deadline").toBeNull();
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(
      "backup failed: the data directory /proc/herald-backup-data (HERALD_DATA_DIR) cannot be made: its file system makes no folders there",
    );
    expect(existsSync(join(work, "never.tar.gz"))).toBe(false);
  }, 30_000);
});
