/**
 * The container image, built from the Dockerfile and run as a user would (podman and buildah
 * from Debian stand in for a Docker engine; the base image is made locally by
 * scripts/container-base.sh, since no image registry is reachable here). The first start prints
 * the key, the health check passes, a publish is accepted, it runs as a non-root user, `podman
 * stop` ends it cleanly (PostgreSQL shut down, not killed), and a restart keeps the data.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { freePort } from "../../src/db/embedded/server.ts";
import { waitFor } from "../helpers/wait.ts";

const root = resolve(import.meta.dirname, "../..");
const env = { ...process.env, CONTAINERS_CONF: join(import.meta.dirname, "containers.conf") };
const suffix = randomBytes(4).toString("hex");
const image = `localhost/herald:test-${suffix}`;
const volume = `herald-test-${suffix}`;
const names: string[] = [];

function podman(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("podman", ["--runtime", "runc", ...args], { env, encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  execFileSync(join(root, "scripts/container-base.sh"), { env, stdio: "inherit" });
  // The registry's CA for npm inside the build, as a build secret (never in the image).
  const cafile = spawnSync("npm", ["config", "get", "cafile"], { encoding: "utf8" }).stdout.trim();
  const secret = cafile && cafile !== "null" ? ["--secret", `id=npm_ca,src=${cafile}`] : [];
  // Said first: a build whose npm cannot trust the registry (a TLS-intercepting proxy whose CA
  // npm's config does not name) fails with SELF_SIGNED_CERT_IN_CHAIN naming only the lockfile's
  // last package, which reads like one request's hiccup.
  process.stderr.write(
    secret.length > 0
      ? `image build: npm's CA file ${cafile} goes in as a build secret\n`
      : "image build: npm names no CA file (npm config get cafile); the build trusts the base image's CAs alone\n",
  );
  execFileSync(
    "buildah",
    [
      "--isolation",
      "chroot",
      "bud",
      "--format",
      "docker",
      "--pull=never",
      ...secret,
      "-t",
      image,
      ".",
    ],
    { env, stdio: ["ignore", "ignore", "inherit"], cwd: root },
  );
}, 600_000);

afterAll(() => {
  for (const n of names) podman("rm", "-f", n);
  podman("volume", "rm", "-f", volume);
  podman("rmi", "-f", image);
});

/** Runs the image on the volume; returns the container's name, its port and its logs. */
async function run(label: string) {
  const name = `herald-${label}-${suffix}`;
  names.push(name);
  const port = await freePort();
  const started = podman(
    "run",
    "-d",
    "--name",
    name,
    "--network=host",
    "-e",
    `HERALD_PORT=${port}`,
    "-v",
    `${volume}:/data`,
    image,
  );
  expect(started.status, started.stderr).toBe(0);
  const logs = () => podman("logs", name).stdout;
  await waitFor(() => /^(Herald \S+ is running|Sign-up is)/m.test(logs()), 60_000);
  return { name, url: `http://127.0.0.1:${port}`, logs };
}

describe("the container image", () => {
  it("starts, serves as a non-root user, stops cleanly, and keeps its data", async () => {
    // A failure says what each container printed (a process that died, a port refused).
    onTestFailed(() => {
      for (const n of names) {
        const { stdout, stderr } = podman("logs", "--timestamps", n);
        process.stderr.write(`--- podman logs ${n}\n${stdout}${stderr}\n`);
      }
    });
    const first = await run("first");
    const key = /^HERALD_API_KEY=(hk_\w+)$/m.exec(first.logs())?.[1] as string;
    expect(key).toMatch(/^hk_/);
    expect(podman("healthcheck", "run", first.name).status).toBe(0);
    expect(podman("exec", first.name, "id", "-un").stdout.trim()).toBe("herald");
    const res = await fetch(`${first.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}` },
      body: JSON.stringify({ title: "from a container" }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };

    expect(podman("stop", "--time", "30", first.name).status).toBe(0);
    expect(podman("inspect", first.name, "--format", "{{.State.ExitCode}}").stdout.trim()).toBe(
      "0",
    );
    expect(first.logs().trimEnd().split("\n").at(-1)).toBe("Herald stopped.");
    const pgLog = podman(
      "run",
      "--rm",
      "-v",
      `${volume}:/data`,
      "--entrypoint",
      "tail",
      image,
      "-1",
      "/data/postgres.log",
    );
    expect(pgLog.stdout).toMatch(/database system is shut down/);

    const second = await run("second");
    expect(second.logs()).not.toContain("HERALD_API_KEY=");
    const got = await fetch(`${second.url}/v1/notifications/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(got.status).toBe(200);
    expect(((await got.json()) as { title: string }).title).toBe("from a container");
    expect(podman("stop", "--time", "30", second.name).status).toBe(0);
  }, 180_000);
});
