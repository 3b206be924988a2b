// A reader that goes away (`sessionhouse demo | head -1`): the output ends, the command does
// not. The demo goes on to sync every stream, closes the embedded engine and exits 0; before,
// the first write after the reader left threw EPIPE and the process died mid-sync.
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ENTITY_STREAMS, SESSIONS_JOB } from "../../../src/pipeline/names.js";
import {
  buildCli,
  cleanEnv,
  removeCli,
  runCli,
  startCli,
  type CliPackage,
} from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let cli: CliPackage;
let dataDir: string;

beforeAll(async () => {
  cli = await buildCli();
  dataDir = mkdtempSync(join(testTmpDir(), "sessionhouse-pipe-"));
}, 120_000);

afterAll(() => {
  removeCli(cli);
  rmSync(dataDir, { recursive: true, force: true });
});

it("demo | head -1: the demo still syncs everything and exits 0", async () => {
  const env = cleanEnv({ SESSIONHOUSE_DATA_DIR: dataDir });
  const demo = startCli(
    cli,
    ["demo", "--days", "1", "--sessions-per-day", "2000"],
    env,
  );
  let firstLine = "";
  demo.child.stdout?.once("data", (d: Buffer) => {
    firstLine = d.toString("utf8").split("\n")[0] ?? "";
    // The reader leaves: the child's next write to the pipe fails with EPIPE.
    demo.child.stdout?.destroy();
  });
  const result = await demo.result;
  expect(firstLine).toMatch(/^sessionhouse demo: simulated control plane at/);
  expect(result.stderr).not.toMatch(/EPIPE|Error/);
  expect({ code: result.code, signal: result.signal }).toEqual({
    code: 0,
    signal: null,
  });

  const runs = await runCli(
    cli,
    ["query", "SELECT job, status FROM runs FINAL", "--format", "JSONEachRow"],
    env,
  );
  expect(runs.code, runs.stderr).toBe(0);
  const status = new Map(
    runs.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { job: string; status: string })
      .map((r) => [r.job, r.status]),
  );
  for (const job of [SESSIONS_JOB, ...ENTITY_STREAMS])
    expect(status.get(job), job).toBe("succeeded");
  expect(
    [...status].filter(([job]) => job.startsWith("aggregations.")).length,
  ).toBeGreaterThan(0);
  expect([...status.values()].every((s) => s === "succeeded")).toBe(true);
}, 180_000);
