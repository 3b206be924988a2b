// Runs test files a second time against a ClickHouse server: the HTTP front over a real engine
// (scripts/http-front.mjs), so that the server insert path, its retries and its error handling
// run on machines without a ClickHouse server. Arguments are passed to vitest; without file
// arguments, the suites scripts/server-suites.mjs lists for the server pass run: the ones that
// run a source branching on the warehouse's kind (the rest issue the same SQL through the same
// client on both kinds, and the first pass proves them). They run in two halves side by side,
// each against a front of its own (two files at a time each, not the first pass's three): one
// front is one engine process, and with one front the files of the pass mostly
// waited for each other's queries (179 s against about 120 s with two, each at nice 19 beside
// the same latency bench; 105–108 s with two on a quiet machine). A JSON
// report asked for with --outputFile.json=<file> is the two halves' reports merged. Uses the
// build in dist/.
//
//   npm run build && node scripts/test-server.mjs [vitest args…]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { SERVER_SUITES } from "./server-suites.mjs";
import {
  jsonOutputArg,
  splitJsonOutput,
  takeReport,
  vitest,
  writeMerged,
} from "./vitest-run.mjs";

const SUITES = SERVER_SUITES.filter((s) => s.pass === "server").map(
  (s) => s.suite,
);

/** An HTTP front over an engine of its own, its directory removed when it is stopped. */
async function startFront() {
  const dir = mkdtempSync(join(tmpdir(), "sessionhouse-front-"));
  const child = spawn(process.execPath, ["scripts/http-front.mjs"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, HTTP_FRONT_DATA_DIR: dir },
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await Promise.race([
    once(lines, "line"),
    once(child, "exit").then(([code]) => {
      throw new Error(`the HTTP front exited with ${code} before it listened`);
    }),
  ]);
  const url = /^CLICKHOUSE_URL=(\S+)$/.exec(first)?.[1];
  if (!url)
    throw new Error(`unexpected first line from the HTTP front: ${first}`);
  return {
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await once(child, "exit");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The suites in two halves of about equal time (the longest first into the lighter half), by
 * the seconds test/durations.json holds; a suite it does not name counts as a minute.
 */
function halves(suites) {
  const durations = existsSync("test/durations.json")
    ? JSON.parse(readFileSync("test/durations.json", "utf8"))
    : {};
  const seconds = (s) => durations[s] ?? 60;
  const parts = [
    { suites: [], seconds: 0 },
    { suites: [], seconds: 0 },
  ];
  for (const s of [...suites].sort((a, b) => seconds(b) - seconds(a))) {
    const lighter = parts[0].seconds <= parts[1].seconds ? parts[0] : parts[1];
    lighter.suites.push(s);
    lighter.seconds += seconds(s);
  }
  return parts.map((p) => p.suites);
}

const { file, rest } = splitJsonOutput(process.argv.slice(2));
const hasFiles = rest.some((a) => !a.startsWith("-"));
const groups = hasFiles ? [[]] : halves(SUITES);
const fronts = await Promise.all(groups.map(() => startFront()));
for (const [i, f] of fronts.entries())
  console.log(`server pass, part ${i + 1}: CLICKHOUSE_URL=${f.url}`);
const codes = await Promise.all(
  groups.map((suites, i) =>
    vitest(
      [
        ...suites,
        ...rest,
        ...(file === undefined ? [] : [jsonOutputArg(`${file}.part${i}`)]),
      ],
      { CLICKHOUSE_URL: fronts[i].url, TEST_WORKERS: "2" },
    ),
  ),
);
await Promise.all(fronts.map((f) => f.stop()));
const reports =
  file === undefined
    ? []
    : groups
        .map((_, i) => takeReport(`${file}.part${i}`))
        .filter((r) => r !== undefined);
writeMerged(file, reports);
process.exit(codes.find((c) => c !== 0) ?? 0);
