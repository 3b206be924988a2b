// One temporary directory for a whole test run, removed when the run ends. vitest runs this
// module's `setup` (globalSetup of every project, vitest.config.ts) in its main process before
// any test file; it points TMPDIR there, and the worker processes vitest forks afterwards, the
// CLI they start and `os.tmpdir()` in both take it. What a file leaves behind (an engine's data
// directory, a report, a key), also from a worker killed mid-file, goes with the run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Set while a run's directory is TMPDIR, so the second project's setup keeps the first's. */
const MARK = "SESSIONHOUSE_TEST_RUN_TMP";

export function setup(): (() => void) | undefined {
  if (process.env[MARK]) return undefined;
  const before = process.env.TMPDIR;
  const dir = mkdtempSync(join(tmpdir(), "sessionhouse-run-"));
  process.env.TMPDIR = dir;
  process.env[MARK] = dir;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env[MARK];
    rmSync(dir, { recursive: true, force: true });
  };
}
