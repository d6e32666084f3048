import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/helpers/global-setup.ts"],
    // Each file gets its own database cloned from a migrated template, so files run in parallel.
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
