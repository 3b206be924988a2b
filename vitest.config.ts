import { defineConfig } from "vitest/config";

// The embedded engine allows one data path per process, so every test file runs in its own
// forked process (isolate) with its own engine directory; see test/helpers/warehouse.ts.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
