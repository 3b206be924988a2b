// One temporary directory for a whole test run, removed when the run ends. vitest runs this
// module's `setup` (globalSetup of every project, vitest.config.ts) in its main process before
// any test file; the worker processes it forks afterwards inherit the directory's name, and
// tests make their files in it with `testTmpDir()`. What a file leaves behind (an engine's data
// directory, a report, a key), also from a worker killed mid-file, goes with the run.
// TMPDIR stays as the machine has it: the product reads it (block files go to /dev/shm unless
// TMPDIR names a directory), and the tests run the product as it runs by default.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The run's directory, for the workers. */
const RUN_DIR = "TEST_RUN_TMPDIR";

/** Where a test makes its temporary files: the run's directory (the system's outside a run). */
export function testTmpDir(): string {
  return process.env[RUN_DIR] ?? tmpdir();
}

export function setup(): (() => void) | undefined {
  // The second project's setup keeps the first's directory.
  if (process.env[RUN_DIR]) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "sessionhouse-run-"));
  process.env[RUN_DIR] = dir;
  return () => {
    delete process.env[RUN_DIR];
    rmSync(dir, { recursive: true, force: true });
  };
}
