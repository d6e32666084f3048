/**
 * The CLI's config file is written whole or not at all: a new copy beside it, renamed over it.
 * Before, it was rewritten in place, and a write that failed half way (here the file size limit,
 * RLIMIT_FSIZE, failing every write past 64 bytes; on a copy-on-write file system, a full disk
 * does the same) left it cut short: the login and the stream devices' credentials went with it.
 * On a full disk, where no new copy fits, the file stays as it was, and `herald listen`, which
 * saves its place after every notification, says once that it cannot and goes on receiving.
 */
import { spawn } from "node:child_process";
import { lstatSync, readFileSync, renameSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor, configFile, devicesListening, herald } from "../helpers/cli.ts";
import { notify, startServer, type TestServer } from "../helpers/server.ts";
import { tempDir } from "../helpers/temp.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ streamKeepaliveMs: 500 });
});
afterAll(async () => server.close());
const { cli, loggedIn } = cliFor(() => server);

/*
 * Runs herald in a mount namespace of its own. `limited`: under `prlimit --fsize=64`. `full`: its
 * config folder a tmpfs of two pages holding the config file and a filler, so nothing more fits.
 * The config file before and after, and the folder's names after, are copied out.
 */
const script = `
  cp "$FOLDER/config.json" "$OUT/before.json"
  if [ "$HOW" = full ]; then
    mount -t tmpfs -o size=8k,mode=700 tmpfs "$FOLDER" || exit 99
    cp "$OUT/before.json" "$FOLDER/config.json" && chmod 600 "$FOLDER/config.json"
    dd if=/dev/zero of="$FOLDER/filler" bs=4k 2>/dev/null
    "$NODE" "$HERALD" "$@"
  else
    prlimit --fsize=64 "$NODE" "$HERALD" "$@"
  fi
  code=$?
  cp "$FOLDER/config.json" "$OUT/after.json"
  ls -A "$FOLDER" > "$OUT/names"
  exit $code`;

async function cramped(how: "limited" | "full", h: string, args: string[]) {
  const out = tempDir("herald-cramped-");
  const child = spawn("unshare", ["--mount", "sh", "-c", script, "sh", ...args], {
    env: {
      ...process.env,
      HOME: h,
      XDG_CONFIG_HOME: join(h, ".config"),
      HERALD_URL: server.url,
      ...{ HOW: how, FOLDER: dirname(configFile(h)), OUT: out },
      ...{ NODE: process.execPath, HERALD: herald },
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let [stdout, stderr] = ["", ""];
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((r) => child.once("close", r));
  expect(code, stderr).not.toBe(99);
  const read = (name: string) => readFileSync(join(out, name), "utf8");
  const names = read("names").trim().split("\n").sort();
  return { code, stdout, stderr, before: read("before.json"), after: read("after.json"), names };
}

/** The config file is the one it was, still a login, with no copy left beside it. */
async function asItWas(h: string, run: Awaited<ReturnType<typeof cramped>>, names: string[]) {
  expect(run.after).toBe(run.before);
  expect(run.names).toEqual(names);
  const who = await cli(["whoami"], { home: h });
  expect(who.code, who.stderr).toBe(0);
}

/** A login whose stream device is saved, with its place (one `herald listen` of `topic`). */
async function listened(topic: string): Promise<string> {
  const h = await loggedIn();
  const first = cli(["listen", "--topic", topic, "--count", "1"], { home: h });
  await devicesListening(server, topic);
  await notify(server, { title: "saved", topic });
  expect((await first).code).toBe(0);
  return h;
}

describe("a config file whose write fails half way", () => {
  it("is left as it was, and the command says so", async () => {
    const h = await loggedIn();
    const used = await cramped("limited", h, ["projects", "use", "default"]);
    expect(used.code).toBe(1);
    expect(used.stderr).toContain(
      `cannot save ${configFile(h)} (EFBIG: file too large, write); it is as it was before`,
    );
    await asItWas(h, used, ["config.json"]);
  });

  it("is left as it was by listen (the limit's signal, SIGXFSZ, stops it)", async () => {
    const h = await listened("limited");
    const listening = cramped("limited", h, ["listen", "--topic", "limited", "--json"]);
    await notify(server, { title: "one", topic: "limited" });
    const heard = await listening;
    expect(heard.code).toBe(153);
    expect(JSON.parse(heard.stdout).title).toBe("one");
    await asItWas(h, heard, ["config.json"]);
  });
});

describe("a config file on a full disk", () => {
  it("is said once by listen, which goes on receiving", async () => {
    const h = await listened("full");
    await notify(server, { title: "one", topic: "full" });
    await notify(server, { title: "two", topic: "full" });
    const heard = await cramped("full", h, ["listen", "--topic", "full", "--count", "2", "--json"]);
    expect(heard.code, heard.stderr).toBe(0);
    const titles = heard.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).title);
    expect(titles).toEqual(["one", "two"]);
    const warning = `warning: cannot save this machine's place in its stream to ${configFile(h)} (ENOSPC: no space left on device, write). Listening goes on`;
    expect(heard.stderr.split(warning)).toHaveLength(2);
    expect(heard.stderr).not.toContain("connection lost");
    await asItWas(h, heard, ["config.json", "filler"]);
  });
});

describe("a config file kept as a symbolic link (with dotfiles)", () => {
  it("stays a link, and the file it points to is the one written", async () => {
    const h = await loggedIn();
    const kept = join(tempDir("herald-dotfiles-"), "herald.json");
    renameSync(configFile(h), kept);
    symlinkSync(kept, configFile(h));
    const used = await cli(["projects", "use", "default"], { home: h });
    expect(used.code, used.stderr).toBe(0);
    expect(lstatSync(configFile(h)).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(kept, "utf8")).project).toBe("default");
  });
});
