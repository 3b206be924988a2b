import { existsSync, readdirSync, readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// A test file's tier is its place:
//   test/unit/         no engine, no server, no child process: seconds (`npm run test:unit`)
//   test/integration/  the simulator over real HTTP, the embedded engine, the CLI as a child
//   test/slow/         minutes each: the chaos runs, the Docker cluster
// Inside each tier the sub-folders name the area (test/unit/api/…, test/integration/cli/…);
// modules shared by tests live in test/helpers/. `npm test` (scripts/test.mjs) runs the unit tier
// first and the other two only when it passed.
const TIERS = ["unit", "integration", "slow"] as const;

// A test file anywhere else would belong to no project and silently never run.
const ROOT = fileURLToPath(new URL(".", import.meta.url));
const TEST_DIR = fileURLToPath(new URL("test", import.meta.url));
const stray = readdirSync(TEST_DIR, { recursive: true, encoding: "utf8" })
  .map((f) => f.split("\\").join("/"))
  .filter((f) => f.endsWith(".test.ts"))
  .filter((f) => !TIERS.some((tier) => f.startsWith(`${tier}/`)));
if (stray.length > 0)
  throw new Error(
    `test files outside test/unit, test/integration and test/slow would never run: ${stray
      .map((f) => `test/${f}`)
      .join(
        ", ",
      )}; move each into the tier it belongs to (see vitest.config.ts)`,
  );

// The embedded engine allows one data path per process, so every test file runs in its own
// forked process (isolate) with its own engine directory; see test/helpers/warehouse.ts.
const shared = {
  pool: "forks" as const,
  // Three files at once on two cores: most integration files spend much of their time waiting
  // for child processes, simulated latency and timers, and a file's start (a fork, its imports,
  // an engine) is time the other files fill. TEST_WORKERS sets another number (the
  // server pass runs two halves of two each, scripts/test-server.mjs).
  maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
  testTimeout: 60_000,
  hookTimeout: 60_000,
  // Everything a run writes to the temporary directory is removed when it ends.
  globalSetup: ["test/helpers/run-tmp.ts"],
};

// The seconds each integration and slow file took in a run (scripts/test-durations.mjs writes it).
const DURATIONS_FILE = fileURLToPath(
  new URL("test/durations.json", import.meta.url),
);
const durations: Record<string, number> = existsSync(DURATIONS_FILE)
  ? (JSON.parse(readFileSync(DURATIONS_FILE, "utf8")) as Record<string, number>)
  : {};

/**
 * The longest files first, across the integration and slow tiers (vitest's own order puts a
 * project's files after another's, and, on a fresh clone without its cache, keeps the order of
 * the file system): a long file that starts last runs alone at the end. A file
 * test/durations.json does not name is taken as the longest.
 */
class LongestFirst extends BaseSequencer {
  override async sort(
    files: TestSpecification[],
  ): Promise<TestSpecification[]> {
    const seconds = (f: TestSpecification) =>
      durations[relative(ROOT, f.moduleId).split("\\").join("/")] ??
      Number.POSITIVE_INFINITY;
    const sorted = await super.sort(files);

    // The unit tier runs alone (scripts/test.mjs): only the other two are reordered.
    if (sorted.some((f) => f.project.name === "unit")) return sorted;
    return [...sorted].sort((a, b) => seconds(b) - seconds(a));
  }
}

// The integration and slow tiers start the CLI from dist/: built once per run, before any file.
const builtDist = {
  globalSetup: [...shared.globalSetup, "test/helpers/built-dist.ts"],
};

export default defineConfig({
  test: {
    reporters: ["default"],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          ...shared,
          // No engine, so no one-engine-per-process rule: the files share a worker process and
          // its loaded modules (half the tier's time went to starting processes and importing).
          isolate: false,
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
        },
      },
      {
        test: {
          ...shared,
          ...builtDist,
          name: "integration",
          include: ["test/integration/**/*.test.ts"],
        },
      },
      {
        test: {
          ...shared,
          ...builtDist,
          name: "slow",
          include: ["test/slow/**/*.test.ts"],
        },
      },
    ],
  },
});
