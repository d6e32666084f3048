import { defineConfig } from "vitest/config";

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
          include: ["test/api/**/*.test.ts"],
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
