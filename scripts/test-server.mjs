// Runs test files a second time against a ClickHouse server: the HTTP front over a real engine
// (scripts/http-front.mjs), so that the server insert path, its retries and its error handling
// run on machines without a ClickHouse server. Arguments are passed to vitest; without any, the
// suites scripts/server-suites.mjs lists for the server pass run: the ones that run a source
// branching on the warehouse's kind (the rest issue the same SQL through the same client on both
// kinds, and the first pass proves them). Uses the build in dist/.
//
//   npm run build && node scripts/test-server.mjs [vitest args…]
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { SERVER_SUITES } from "./server-suites.mjs";

const SUITES = SERVER_SUITES.filter((s) => s.pass === "server").map(
  (s) => s.suite,
);

// The front's engine directory is removed when the pass ends.
const frontDir = mkdtempSync(join(tmpdir(), "sessionhouse-front-"));
const front = spawn(process.execPath, ["scripts/http-front.mjs"], {
  stdio: ["ignore", "pipe", "inherit"],
  env: { ...process.env, HTTP_FRONT_DATA_DIR: frontDir },
});
const lines = createInterface({ input: front.stdout });
const [first] = await Promise.race([
  once(lines, "line"),
  once(front, "exit").then(([code]) => {
    throw new Error(`the HTTP front exited with ${code} before it listened`);
  }),
]);
const url = /^CLICKHOUSE_URL=(\S+)$/.exec(first)?.[1];
if (!url)
  throw new Error(`unexpected first line from the HTTP front: ${first}`);
console.log(`server pass: CLICKHOUSE_URL=${url}`);

const args = process.argv.slice(2);
const hasFiles = args.some((a) => !a.startsWith("-"));
const vitest = spawn(
  process.execPath,
  [
    "node_modules/vitest/vitest.mjs",
    "run",
    ...(hasFiles ? [] : SUITES),
    ...args,
  ],
  {
    stdio: "inherit",
    env: { ...process.env, CLICKHOUSE_URL: url },
  },
);
const [code] = await once(vitest, "exit");
front.kill("SIGTERM");
await once(front, "exit");
rmSync(frontDir, { recursive: true, force: true });
process.exit(code ?? 1);
