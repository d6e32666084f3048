import { defineConfig } from "vitest/config";
import { findChromium } from "./test/helpers/chromium.ts";
import { onPath } from "./test/helpers/on-path.ts";
import { findPythonClientTools, pythonClientPackages } from "./test/helpers/python.ts";

// The console's tests drive a real Chromium. CI installs one and insists (HERALD_REQUIRE_BROWSER);
// elsewhere, without one, they are left out with one line saying how to get them.
const chromium = findChromium();
if (!chromium) {
  if (process.env.HERALD_REQUIRE_BROWSER === "1") {
    throw new Error("HERALD_REQUIRE_BROWSER=1 but no Chromium: apt-get install chromium");
  }
  process.stderr.write(
    "Browser tests left out: no Chromium found (apt-get install chromium, or set HERALD_CHROMIUM to one).\n",
  );
}

// The generated Python client's test needs Debian's protoc, gRPC plugin and Python gRPC; CI
// installs them and insists (HERALD_REQUIRE_PYTHON_CLIENT).
const pythonClient = findPythonClientTools() !== undefined;
if (!pythonClient) {
  if (process.env.HERALD_REQUIRE_PYTHON_CLIENT === "1") {
    throw new Error(
      `HERALD_REQUIRE_PYTHON_CLIENT=1 but the tools are missing: ${pythonClientPackages}`,
    );
  }
  process.stderr.write(`Python client test left out: ${pythonClientPackages}\n`);
}

// The container image's test builds the Dockerfile with Debian's podman, buildah and debootstrap,
// as root; CI installs them and insists (HERALD_REQUIRE_CONTAINER).
const containerTools = ["podman", "buildah", "debootstrap", "runc"];
const container = process.getuid?.() === 0 && containerTools.every((t) => onPath(t));
if (!container) {
  if (process.env.HERALD_REQUIRE_CONTAINER === "1") {
    throw new Error(
      `HERALD_REQUIRE_CONTAINER=1 but this is not root with ${containerTools.join(", ")}`,
    );
  }
  process.stderr.write(
    `Container image test left out: it needs root and apt-get install ${containerTools.join(" ")}\n`,
  );
}

// Real senders of the inbound hooks: Debian's prometheus-alertmanager and swaks. CI installs
// them and insists (HERALD_REQUIRE_SENDERS).
const senderTools = ["prometheus-alertmanager", "swaks"];
const senders = senderTools.every((t) => onPath(t));
if (!senders) {
  if (process.env.HERALD_REQUIRE_SENDERS === "1") {
    throw new Error(
      `HERALD_REQUIRE_SENDERS=1 but missing: apt-get install ${senderTools.join(" ")}`,
    );
  }
  process.stderr.write(`Real senders' tests left out: apt-get install ${senderTools.join(" ")}\n`);
}

export default defineConfig({
  test: {
    projects: [
      {
        // Pure code (test/unit mirrors src/domain and friends): no database, no server.
        test: { name: "unit", include: ["test/unit/**/*.test.ts"] },
      },
      {
        test: {
          name: "api",
          include: [
            "test/api/**/*.test.ts",
            ...(chromium ? ["test/browser/**/*.test.ts"] : []),
            ...(pythonClient ? ["test/clients/**/*.test.ts"] : []),
            ...(container ? ["test/container/**/*.test.ts"] : []),
            ...(senders ? ["test/senders/**/*.test.ts"] : []),
          ],
          globalSetup: ["test/helpers/global-setup.ts"],
          // Each file gets its own database cloned from a migrated template, so files run in
          // parallel.
          pool: "forks",
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
