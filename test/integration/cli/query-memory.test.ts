// `query` of a result larger than the memory it may take: on the embedded engine the result is
// written a block at a time as the engine produces it, so the process holds a block, not the
// result (the engine's client would answer with the whole result in one buffer).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  buildCli,
  cleanEnv,
  removeCli,
  type CliPackage,
} from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let cli: CliPackage | undefined;
let dir: string;

beforeAll(async () => {
  cli = await buildCli();
  dir = mkdtempSync(join(testTmpDir(), "query-memory-"));
  // A read command creates no data directory: the engine's own, with its `default` database.
  mkdirSync(join(dir, "data"), { mode: 0o700 });
});

afterAll(() => {
  removeCli(cli);
  rmSync(dir, { recursive: true, force: true });
});

const ROWS = 8_000_000;
const SQL = `SELECT number, repeat('x', 100) AS s FROM numbers(${ROWS})`;
/** CSV of SQL: each row's number, a comma, 100 x in quotes and a newline. */
const EXPECTED_BYTES =
  Array.from({ length: 7 }, (_, d) => {
    const from = d === 0 ? 0 : 10 ** d;
    const to = Math.min(10 ** (d + 1), ROWS);
    return to > from ? (to - from) * (d + 1) : 0;
  }).reduce((a, b) => a + b, 0) +
  ROWS * (1 + 102 + 1);

interface Outcome {
  code: number | null;
  bytes: number;
  newlines: number;
  peakRssBytes: number;
  stderr: string;
}

/** Runs the CLI with a small V8 heap; counts what it writes, and its peak RSS at exit. */
function query(): Promise<Outcome> {
  if (!cli) throw new Error("no CLI package");
  // The child reports its own peak resident set size when it exits.
  const report = join(dir, "peak-rss.mjs");
  writeFileSync(
    report,
    "process.on('exit', () => process.stderr.write(`peak-rss ${process.resourceUsage().maxRSS * 1024}\\n`));\n",
  );
  const child = spawn(
    process.execPath,
    [
      "--max-old-space-size=64",
      "--import",
      report,
      cli.bin,
      "query",
      SQL,
      "--format",
      "CSV",
    ],
    {
      cwd: cli.root,
      env: cleanEnv({
        SESSIONHOUSE_DATA_DIR: join(dir, "data"),
        CLICKHOUSE_DATABASE: "default",
      }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let bytes = 0;
  let newlines = 0;
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1))
      newlines++;
  });
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.once("close", (code) =>
      resolve({
        code,
        bytes,
        newlines,
        peakRssBytes: Number(/peak-rss (\d+)/.exec(stderr)?.[1] ?? NaN),
        stderr,
      }),
    ),
  );
}

it("writes a result larger than its memory whole, holding a block of it at a time", async () => {
  const r = await query();
  expect(r.stderr).not.toMatch(/error/i);
  expect(r.code).toBe(0);
  expect(r.newlines).toBe(ROWS);
  expect(r.bytes).toBe(EXPECTED_BYTES);
  // The whole result held at once would take more than its own size.
  expect(r.peakRssBytes).toBeLessThan(EXPECTED_BYTES);
}, 300_000);
