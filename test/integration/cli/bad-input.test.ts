// Bad input from people, through the real CLI: each mistake gets a clear, specific
// error and a non-zero exit, and changes nothing — the data, the checkpoints and the schema are
// as they were. A failure that reached the API is recorded as a failed run in `runs` (that is
// what status and the health dashboard show), and nothing else is written.
//
// The embedded engine allows one process per data directory: this process holds the warehouse
// open only while no child runs. The mistakes run the CLI's main in this process (cli-in-process.ts:
// main writes the error and hint lines and returns the status the bin wrapper sets); the edited
// migration runs the built CLI as a child, from a copy of the package whose migrations/ differ.
import { createServer, type Server } from "node:net";
import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { API_KEY, NOON, testSimulator } from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import {
  buildCli,
  removeCli,
  cleanEnv,
  copyCli,
  runCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { scriptedServer, type TestServer } from "../../helpers/servers.js";

const HOUR = 3_600_000;
const FROM = new Date(NOON - 6 * HOUR).toISOString();
const TO = new Date(NOON).toISOString();
/** A range the first sync did not cover: a sync of it must ask the API. */
const NEW_FROM = new Date(NOON - 12 * HOUR).toISOString();
const NEW_TO = FROM;
const PASSWORD = "ch-password-5e3f1a";
let sim: Simulator;
let cli: CliPackage;
let config: Config;
let closedPort: number;
let notTheApi: TestServer;
let workDir: string;
let edited: CliPackage | undefined;
/**
 * The warehouse this process reads the state through, open while the CLI runs in this process
 * (one engine per process: opened once, not at every look); closed before a child runs.
 */
let open: Warehouse | undefined;

/** A port nothing listens on: bound, then released. */
async function freePort(): Promise<number> {
  const s: Server = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  [sim, cli] = await Promise.all([
    testSimulator({ historyDays: 3 }),
    buildCli(),
  ]);
  config = await testConfig({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
  });
  // The migrated schema replayed (schema-template.ts): the first sync below finds every
  // migration applied, as on any database a person has used before; the edited migration is
  // checked against this ledger all the same.
  open = await migratedWarehouse(config);
  closedPort = await freePort();
  notTheApi = await scriptedServer((_n, _r, res) => {
    res.writeHead(404, { "content-type": "text/html" });
    res.end("<html><body>Welcome to nginx! Not found.</body></html>");
  });
  workDir = cli.root;
  // Fast retries for the unreachable API: the point is the message, not the patience.
  writeFileSync(
    join(workDir, "fast.yaml"),
    "api:\n  maxRetries: 1\n  retryBaseMs: 10ms\n  retryMaxMs: 20ms\n",
  );
  // A first, good sync: the state every mistake below must leave alone.
  const r = await cli$(["sync", "sessions", "--from", FROM, "--to", TO]);
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const a = await cli$([
    "sync",
    "aggregations",
    "--job",
    "logs_by_technology",
    "--from",
    FROM,
    "--to",
    TO,
  ]);
  expect(a.code).toBe(0);
}, 180_000);

afterAll(async () => {
  await open?.close();
  await notTheApi?.close();
  await sim?.close();
  removeCli(cli);
  removeCli(edited);
});

function env(
  extra: Record<string, string | undefined> = {},
): NodeJS.ProcessEnv {
  return cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    CLICKHOUSE_URL: config.clickhouse.url,
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
    ...extra,
  });
}

/** What a run printed and its exit status. */
type Ran = Pick<CliResult, "code" | "stdout" | "stderr">;

const outputs: Ran[] = [];
/** The CLI's main in this process; the built package `pkg` as a child when given. */
async function cli$(
  args: string[],
  extra: Record<string, string | undefined> = {},
  pkg?: CliPackage,
): Promise<Ran> {
  let r: Ran;
  if (pkg) {
    await open?.close();
    open = undefined;
    r = await runCli(pkg, args, env(extra));
  } else {
    const own: Record<string, string> = {};
    for (const [k, v] of Object.entries(env(extra)))
      if (v !== undefined) own[k] = v;
    const p = await mainInProcess(own, ...args);
    r = { code: p.status, stdout: p.stdout, stderr: p.stderr };
  }
  outputs.push(r);
  return r;
}

interface State {
  tables: Record<string, string>;
  failedRuns: { job: string; error: string }[];
}

/**
 * A fingerprint of what every table says (FINAL: background merges may fold rows at any time,
 * and a new version of any row changes it), and the failed runs.
 */
async function state(): Promise<State> {
  open ??= await openWarehouse(config);
  const w = open;
  const tables: Record<string, string> = {};
  for (const t of [
    "sessions",
    "checkpoints",
    "dead_letters",
    "agg_histogram",
    "agg_top_values",
    "agg_windows",
    "schema_migrations",
  ]) {
    const [r] = await select<{ n: string; h: string }>(
      w,
      `SELECT count() AS n, sum(cityHash64(*)) AS h FROM {db}.${t}${t === "schema_migrations" ? "" : " FINAL"}`,
    );
    tables[t] = `${r?.n}/${r?.h}`;
  }
  const [runs] = await select<{ n: string; h: string }>(
    w,
    "SELECT count() AS n, sum(cityHash64(*)) AS h FROM {db}.runs FINAL WHERE run_id NOT IN (SELECT run_id FROM {db}.runs FINAL WHERE status = 'failed')",
  );
  tables.runs = `${runs?.n}/${runs?.h}`;
  const failedRuns = await select<{ job: string; error: string }>(
    w,
    "SELECT job, error FROM {db}.runs FINAL WHERE status = 'failed' ORDER BY started_at",
  );
  const [tableCount] = await select<{ n: string }>(
    w,
    "SELECT count() AS n FROM system.tables WHERE database = {db:String}",
    {
      db: config.clickhouse.database,
    },
  );
  tables["system.tables"] = String(tableCount?.n);
  return { tables, failedRuns };
}

/** Runs the mistake and checks exit code, message, hint, and that nothing changed. */
async function mistake(
  args: string[],
  extra: Record<string, string | undefined>,
  expected: { code: number; error: RegExp; hint?: RegExp; failedRun?: RegExp },
  pkg?: CliPackage,
): Promise<Ran> {
  const before = await state();
  const r = await cli$(args, extra, pkg);
  expect(r.code, r.stderr).toBe(expected.code);
  const lines = r.stderr.trim().split("\n");
  expect(lines[0]).toMatch(/^error: /);
  expect(r.stderr).toMatch(expected.error);
  if (expected.hint)
    expect(r.stderr).toMatch(new RegExp(`\\nhint: .*${expected.hint.source}`));
  // No stack trace: a person reads this.
  expect(r.stderr).not.toMatch(/\n\s+at /);
  const after = await state();
  expect(after.tables).toEqual(before.tables);
  const newFailures = after.failedRuns.slice(before.failedRuns.length);
  if (expected.failedRun) {
    expect(newFailures).toHaveLength(1);
    expect(newFailures[0]?.error).toMatch(expected.failedRun);
  } else {
    expect(newFailures).toEqual([]);
  }
  return r;
}

describe("bad input changes nothing and says what is wrong", () => {
  it("--from after --to", async () => {
    await mistake(
      ["sync", "sessions", "--from", TO, "--to", FROM],
      {},
      { code: 2, error: /--from .* is not before --to/, hint: /swap/ },
    );
    await mistake(
      ["sync", "aggregations", "--from", TO, "--to", FROM],
      {},
      { code: 2, error: /--from .* is not before --to/ },
    );
  });

  it("a date that does not parse", async () => {
    await mistake(
      ["sync", "sessions", "--from", "2026-13-45"],
      {},
      {
        code: 2,
        error: /--from "2026-13-45" is not a date/,
        hint: /2026-11-01/,
      },
    );
    await mistake(
      ["sync", "sessions", "--from", FROM, "--to", "yesterday-ish"],
      {},
      { code: 2, error: /--to "yesterday-ish" is not a date/ },
    );
  });

  it("a day the calendar does not have, never rolled over to the next month", async () => {
    await mistake(
      [
        "hold",
        "add",
        "--user",
        "alice@example.com",
        "--reason",
        "matter 2",
        "--until",
        "2027-02-30",
      ],
      {},
      {
        code: 2,
        error: /--until "2027-02-30" is not a date: February 2027 has 28 days/,
        hint: /give a day the calendar has; write it as 2026-11-01/,
      },
    );
    await mistake(
      ["report", "access-review", "--from", "2026-02-30", "--to", "2026-03-31"],
      {},
      {
        code: 2,
        error: /--from "2026-02-30" is not a date: February 2026 has 28 days/,
      },
    );
  });

  it("an unknown job name", async () => {
    await mistake(
      ["sync", "aggregations", "--job", "logs_by_colour"],
      {},
      {
        code: 2,
        error: /no aggregation job named "logs_by_colour"/,
        hint: /the configured aggregation jobs, nearest first: logs_by_technology/,
      },
    );
  });

  it("an invalid config, every problem listed at once", async () => {
    const r = await mistake(
      ["sync", "sessions"],
      {
        SESSIONHOUSE_API_URL: "api.example.com",
        SESSIONHOUSE_PAGE_SIZE: "0",
        SESSIONHOUSE_WINDOW: "soon",
      },
      {
        code: 2,
        error: /invalid configuration/,
        hint: /fix the settings/,
      },
    );
    expect(r.stderr).toMatch(/SESSIONHOUSE_API_URL must be an http/);
    expect(r.stderr).toMatch(/SESSIONHOUSE_PAGE_SIZE must be at least 1/);
    expect(r.stderr).toMatch(/SESSIONHOUSE_WINDOW/);
    // A flag is named as the flag, not as the variable it stands in for.
    await mistake(
      ["--log-level", "verbose", "sync", "sessions"],
      {},
      {
        code: 2,
        error: /--log-level "verbose" is not a log level/,
        hint: /give one of fatal, error, warn, info, debug, trace, silent/,
      },
    );
    await mistake(
      ["--config", join(workDir, "missing.yaml"), "sync", "sessions"],
      {},
      { code: 2, error: /missing\.yaml cannot be read/ },
    );
  });

  it("a misspelt variable: named with the one meant, refused when its setting is required", async () => {
    const r = await mistake(
      ["sync", "sessions", "--from", FROM, "--to", TO],
      { SESSIONHOUSE_API_KEY: undefined, SESSIONHOUSE_API_KYE: API_KEY },
      {
        code: 2,
        error:
          /SESSIONHOUSE_API_KYE is set, and no setting reads it \(did you mean SESSIONHOUSE_API_KEY\?\)/,
      },
    );
    expect(r.stderr).not.toContain(API_KEY);
    // Not required: the command goes on, and says what it did not read.
    const q = await cli$(["status"], { SESSIONHOUSE_RETENTON_DAYS: "30" });
    expect(q.code, q.stderr).toBe(0);
    expect(q.stderr).toContain(
      "warning: SESSIONHOUSE_RETENTON_DAYS is set, and no setting reads it (did you mean SESSIONHOUSE_RETENTION_DAYS?)",
    );
  });

  it("an unreachable API URL", async () => {
    // The default retry settings: a person is told after one short retry, not seven.
    await mistake(
      ["sync", "sessions", "--from", FROM, "--to", TO],
      { SESSIONHOUSE_API_URL: `http://127.0.0.1:${closedPort}` },
      {
        code: 1,
        error:
          /\(ECONNREFUSED\) \(gave up after 2 tries: nothing answers there\)/,
        hint: /check SESSIONHOUSE_API_URL \(host and port\)/,
        failedRun: /ECONNREFUSED/,
      },
    );
    // https:// to a server that speaks plain HTTP: named as such.
    await mistake(
      ["sync", "sessions", "--from", FROM, "--to", TO],
      { SESSIONHOUSE_API_URL: sim.url.replace("http://", "https://") },
      {
        code: 1,
        error: /does not speak TLS/,
        hint: /plain HTTP server: write http:\/\//,
        failedRun: /does not speak TLS/,
      },
    );
    await mistake(
      [
        "--config",
        join(workDir, "fast.yaml"),
        "sync",
        "sessions",
        "--from",
        FROM,
        "--to",
        TO,
      ],
      { SESSIONHOUSE_API_URL: `http://127.0.0.1:${closedPort}` },
      {
        code: 1,
        error: new RegExp(
          `cannot reach http://127.0.0.1:${closedPort} \\(ECONNREFUSED\\)`,
        ),
        hint: /SESSIONHOUSE_API_URL/,
        failedRun: /ECONNREFUSED/,
      },
    );
  });

  it("a wrong API URL: a path the service does not serve, or a server that is not the API", async () => {
    const before = sim.stats().requests;
    await mistake(
      ["sync", "sessions", "--from", NEW_FROM, "--to", NEW_TO],
      { SESSIONHOUSE_API_URL: `${sim.url}/v2/api` },
      {
        code: 1,
        error: /unimplemented \(HTTP 404\)/,
        hint: /SESSIONHOUSE_API_URL/,
        failedRun: /unimplemented/,
      },
    );
    expect(sim.stats().requests - before).toBe(1);
    await mistake(
      [
        "sync",
        "aggregations",
        "--job",
        "logs_by_technology",
        "--from",
        NEW_FROM,
        "--to",
        NEW_TO,
      ],
      { SESSIONHOUSE_API_URL: notTheApi.url },
      {
        code: 1,
        error: /HTTP_404 \(HTTP 404\): unexpected text\/html response/,
        hint: /SESSIONHOUSE_API_URL/,
        failedRun: /HTTP_404/,
      },
    );
    expect(notTheApi.requests).toHaveLength(1);
  });

  it("a wrong key: one request, exit 1 with the hint, the key in no output", async () => {
    const wrongKey = `${API_KEY}-wrong`;
    const before = sim.stats().requests;
    const r = await mistake(
      ["sync", "sessions", "--from", NEW_FROM, "--to", NEW_TO],
      { SESSIONHOUSE_API_KEY: wrongKey },
      {
        code: 1,
        error: /unauthenticated \(HTTP 401\)/,
        hint: /the API key was refused: check SESSIONHOUSE_API_KEY/,
        failedRun: /unauthenticated/,
      },
    );
    expect(sim.stats().requests - before).toBe(1);
    expect(r.stdout + r.stderr).not.toContain(wrongKey);
    // Every aggregation job of the run: the first refusal ends it, the other jobs never ask.
    const all = await cli$(
      ["sync", "aggregations", "--from", NEW_FROM, "--to", NEW_TO],
      { SESSIONHOUSE_API_KEY: wrongKey },
    );
    expect(all.code).toBe(1);
    expect(sim.stats().requests - before).toBe(2);
    expect(all.stdout + all.stderr).not.toContain(wrongKey);
  });

  it("an unreachable ClickHouse", async () => {
    const r = await mistake(
      ["sync", "sessions", "--from", FROM, "--to", TO],
      { CLICKHOUSE_URL: `http://default:${PASSWORD}@127.0.0.1:${closedPort}` },
      {
        code: 1,
        error: new RegExp(
          `^error: ClickHouse at http://127.0.0.1:${closedPort} cannot be reached: .*ECONNREFUSED`,
        ),
        hint: /CLICKHOUSE_URL/,
      },
    );
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    const status = await mistake(
      ["status"],
      {
        CLICKHOUSE_URL: `http://127.0.0.1:${closedPort}`,
        CLICKHOUSE_PASSWORD: PASSWORD,
      },
      {
        code: 1,
        error: /cannot be reached/,
      },
    );
    expect(status.stdout + status.stderr).not.toContain(PASSWORD);
  });

  it("a migration file edited after it was applied", async () => {
    // A private copy of the package whose migration 0002 gained a line.
    edited = copyCli(cli);
    appendFileSync(
      join(edited.migrations, "0002_sessions.sql"),
      "\n-- an afterthought\n",
    );
    for (const args of [
      ["migrate"],
      ["sync", "sessions", "--from", FROM, "--to", TO],
    ]) {
      await mistake(
        args,
        {},
        {
          code: 1,
          error:
            /migration 0002_sessions\.sql was changed after it was applied/,
          hint: /new numbered migration/,
        },
        edited,
      );
    }
  });

  it("wrote neither the key nor the password anywhere", () => {
    expect(outputs.length).toBeGreaterThan(10);
    for (const o of outputs) {
      expect(o.stdout + o.stderr).not.toContain(API_KEY);
      expect(o.stdout + o.stderr).not.toContain(PASSWORD);
    }
  });
});
