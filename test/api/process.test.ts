/**
 * Herald as a process: `npm start` on an embedded PostgreSQL, first-start bootstrap, restarts,
 * graceful shutdown, and a hard crash right after a 202.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { DeviceService } from "../../gen/herald/v1/device_service_pb.ts";
import { InboxService } from "../../gen/herald/v1/inbox_service_pb.ts";
import { relocatedClusterDir } from "../../src/db/embedded/user.ts";
import { freshDatabase, sql } from "../helpers/db.ts";
import { keyFrom, runOperator, spawnHerald, waitForKey } from "../helpers/process.ts";
import { removedAfterTests, tempDir } from "../helpers/temp.ts";
import { waitFor } from "../helpers/wait.ts";

async function publish(url: string, key: string, title: string) {
  return fetch(`${url}/v1/notify`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: JSON.stringify({ title }),
  });
}

describe("npm start on the embedded PostgreSQL", () => {
  it("bootstraps once, keeps data across restarts, and shuts down cleanly on SIGTERM", async () => {
    const dataDir = tempDir("herald-start-");
    const first = await spawnHerald({ HERALD_DATA_DIR: dataDir });
    const key = await waitForKey(first);
    expect(key).toMatch(/^hk_[0-9A-Za-z]{38}$/);
    expect(first.stdout().match(/HERALD_API_KEY=/g)).toHaveLength(1);
    // The owner's one-time setup link, once, pointing at the console's setup page.
    const setup = /^HERALD_OWNER_SETUP_URL=(\S+)$/m.exec(first.stdout())?.[1] ?? "";
    expect(setup).toMatch(new RegExp(`^${first.url}/setup#[\\w-]{32}$`));
    expect(first.stdout()).toContain("Sign-up is closed");
    const res = await publish(first.url, key as string, "survives restarts");
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    // The embedded PostgreSQL was stopped with the server.
    expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);

    const second = await spawnHerald({
      HERALD_DATA_DIR: dataDir,
      HERALD_OWNER_PASSWORD: "too late for this",
    });
    expect(second.stdout()).not.toContain("HERALD_API_KEY=");
    expect(second.stdout()).not.toContain("HERALD_OWNER_SETUP_URL=");
    // A password given after the first start is not silently ignored.
    expect(second.stdout()).toContain("HERALD_OWNER_PASSWORD is used at the first start only");
    const got = await fetch(`${second.url}/v1/notifications/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { title: string }).title).toBe("survives restarts");
    // The key never reached the logs.
    expect(readFileSync(join(dataDir, "postgres.log"), "utf8")).not.toContain(key as string);
    second.child.kill("SIGINT");
    expect(await second.exited).toBe(0);
    // The operator prints a new setup link (the console test uses one; the API test, its rules).
    const link = await runOperator(["ops/owner-setup-link"], {
      DATABASE_URL: "",
      HERALD_DATA_DIR: dataDir,
    });
    expect(link.status, link.stderr).toBe(0);
    expect(link.stdout).toMatch(
      /password of owner@localhost.*\n\nHERALD_OWNER_SETUP_URL=http:\/\/127\.0\.0\.1:8080\/setup#[\w-]{32}\n$/s,
    );
  }, 60_000);

  it("recovers after a SIGKILL left its PostgreSQL running", async () => {
    const dataDir = tempDir("herald-kill-");
    const first = await spawnHerald({ HERALD_DATA_DIR: dataDir });
    const key = await waitForKey(first);
    first.child.kill("SIGKILL");
    await first.exited;
    const second = await spawnHerald({ HERALD_DATA_DIR: dataDir });
    expect((await publish(second.url, key, "after kill")).status).toBe(202);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }, 60_000);
});

describe("Ctrl-C with a live stream open", () => {
  it("stops the server and its PostgreSQL within 2 s, with no error lines", async () => {
    const dataDir = tempDir("herald-ctrlc-");
    const proc = await spawnHerald(
      {
        HERALD_DATA_DIR: dataDir,
        HERALD_OWNER_PASSWORD: "pw-ctrl-c-test",
      },
      { ownGroup: true },
    );
    await waitForKey(proc);
    const devices = createClient(
      DeviceService,
      createConnectTransport({ baseUrl: proc.url, httpVersion: "1.1" }),
    );
    const { deviceCredential } = await devices.signInDevice({
      method: { case: "password", value: { email: "owner@localhost", password: "pw-ctrl-c-test" } },
      name: "listener",
      platform: "stream",
    });
    const inbox = createClient(InboxService, createGrpcTransport({ baseUrl: proc.url }));
    let open = false;
    const stream = (async () => {
      for await (const _ of inbox.subscribe(
        {},
        { headers: { authorization: `Bearer ${deviceCredential}` } },
      )) {
        // Nothing is published: the one message is the keepalive that says it is open.
        open = true;
      }
    })().catch((err: unknown) => err);
    await waitFor(() => open);
    const started = Date.now();
    // As a terminal does: to the whole foreground process group.
    process.kill(-(proc.child.pid as number), "SIGINT");
    expect(await proc.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await stream) as ConnectError).toMatchObject({ code: Code.Unavailable });
    const errors = `${proc.stdout()}${proc.stderr()}`
      .split("\n")
      .filter((l) => /"level":(50|60)/.test(l) || /ECONNREFUSED/.test(l));
    expect(errors).toEqual([]);
    expect(existsSync(join(dataDir, "pg", "postmaster.pid"))).toBe(false);
  }, 60_000);
});

describe("a process manager stopping npm start", () => {
  it("stops the server and its PostgreSQL: SIGTERM to npm reaches them, nothing is orphaned", async () => {
    const dataDir = tempDir("herald-npm-");
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: join(import.meta.dirname, "../.."),
      env: { ...process.env, HERALD_PORT: "0", DATABASE_URL: "", HERALD_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    npm.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => npm.once("exit", (code) => r(code)));
    await waitFor(() => keyFrom(out) !== undefined, 30_000);
    const serverPid = Number(/"pid":(\d+)/.exec(out)?.[1]);
    const postmaster = Number(
      readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0],
    );
    npm.kill("SIGTERM");
    await exited;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(serverPid) && !alive(postmaster), 5_000);
    expect(alive(serverPid)).toBe(false);
    expect(alive(postmaster)).toBe(false);
  }, 60_000);
});

describe("npm start as root in a directory under a 0700 home", () => {
  it("starts, publishes and stops; the cluster lives where its user can reach it", async () => {
    const home = tempDir("herald-root-home-");
    chmodSync(home, 0o700);
    const dataDir = join(home, "app", ".herald");
    const proc = await spawnHerald({ HERALD_DATA_DIR: dataDir });
    const key = await waitForKey(proc);
    expect((await publish(proc.url, key, "from a closed home")).status).toBe(202);
    const relocated = relocatedClusterDir(dataDir);
    if (process.getuid?.() === 0) {
      // PostgreSQL runs as `postgres`, which cannot enter the home: its cluster is elsewhere.
      expect(existsSync(join(relocated, "PG_VERSION"))).toBe(true);
      expect(proc.stdout()).toContain(`keeps its data in ${relocated}`);
      removedAfterTests(relocated);
    } else {
      expect(existsSync(join(dataDir, "pg", "PG_VERSION"))).toBe(true);
    }
    proc.child.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }, 60_000);
});

describe("an external DATABASE_URL", () => {
  it("gets no bootstrap unless HERALD_BOOTSTRAP=1", async () => {
    const databaseUrl = await freshDatabase();
    const quiet = await spawnHerald({
      DATABASE_URL: databaseUrl,
      HERALD_OWNER_PASSWORD: "not without HERALD_BOOTSTRAP",
    });
    expect(keyFrom(quiet.stdout())).toBeUndefined();
    // Says why the password was not used (not "first start only": this is the first start).
    expect(quiet.stdout()).toContain(
      "HERALD_OWNER_PASSWORD was ignored: with DATABASE_URL, the owner is created only with HERALD_BOOTSTRAP=1",
    );
    quiet.child.kill("SIGTERM");
    await quiet.exited;
    expect(await sql(databaseUrl, "select id from account")).toEqual([]);
  }, 60_000);

  it("loses nothing when the server is killed right after a 202", async () => {
    const databaseUrl = await freshDatabase();
    const herald = await spawnHerald({ DATABASE_URL: databaseUrl, HERALD_BOOTSTRAP: "1" });
    const key = await waitForKey(herald);
    const res = await publish(herald.url, key, "crash right after");
    expect(res.status).toBe(202);
    herald.child.kill("SIGKILL");
    await herald.exited;
    const { id } = (await res.json()) as { id: string };
    const rows = await sql<{ title: string; status: string }>(
      databaseUrl,
      "select title, status from notification where id = $1",
      [id],
    );
    expect(rows.map((r) => r.title)).toEqual(["crash right after"]);
    // Its delivery work survived too: still queued, or already fanned out (no devices here).
    expect(["queued", "no_devices"]).toContain(rows[0]?.status);
  }, 60_000);
});
