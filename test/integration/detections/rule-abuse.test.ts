// A rule file can never change the warehouse. Rules whose SQL writes (ALTER … DELETE, INSERT,
// TRUNCATE), drops, optimizes, runs SYSTEM or KILL, writes a file (INTO OUTFILE), reads a file of
// the host (file()) or holds two statements are refused by `detect test` and `detect run` (the
// built CLI) and by the detections job of `run` (windows on arrival); afterwards every table of
// the database holds what it held, and no file appeared. Sigma values crafted to break quoting
// match the sessions holding exactly that value, on the same three paths.
// The built CLI runs as a child for `detect test` (each start migrates a fresh scratch engine)
// and for one `detect run` of each outcome (refused, found); the other `detect run` cases run
// the CLI's main in process (cli-in-process.ts): the same command on the same warehouse, its
// exit status and output, without a node and engine start each.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import type { Config } from "../../../src/config/index.js";
import { fixtureSession } from "../../../src/detections/fixtures.js";
import { withRun } from "../../../src/pipeline/context.js";
import { SessionWriter } from "../../../src/pipeline/session-writer.js";
import { pipelineJobs, planJobs } from "../../../src/scheduler/jobs.js";
import { createLogger } from "../../../src/util/logger.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { quoteIdent } from "../../../src/warehouse/sql.js";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import {
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

const cli = privateCli();
let config: Config;
let w: Warehouse;
/** Where a rule's INTO OUTFILE would write: must stay empty. */
const TRAP = mkdtempSync(join(testTmpDir(), "rule-abuse-trap-"));
const NOW = Date.now();
const FROM = "{window_from:DateTime64(3, 'UTC')}";

/** A rule file: its `sql:` (or `sigma:`) on line 6, two fixtures. */
function ruleFile(id: string, logic: string, fixtures?: string): string {
  return `id: ${id}
title: ${id}
description: a rule of the abuse test
severity: low
owner: tests
${logic}
fixtures:
${fixtures ?? "  - { name: any session, fires: true, sessions: [{}] }\n  - { name: none, fires: false }"}
`;
}

/** A directory holding the one rule file `<id>.yaml`; returns the directory and the file. */
function ruleDir(id: string, text: string): { dir: string; file: string } {
  const dir = mkdtempSync(join(testTmpDir(), `rule-abuse-${id}-`));
  const file = join(dir, `${id}.yaml`);
  writeFileSync(file, text);
  return { dir, file };
}

/** Stores sessions as a sync stores them, each with its native account, started 10 minutes ago. */
async function store(
  sessions: readonly { id: string; username: string }[],
): Promise<void> {
  const api = ControlPlaneApi.fromConfig(config);
  try {
    await withRun(
      { config, api, warehouse: w, logger: createLogger({ level: "silent" }) },
      "test.store",
      async (ctx) => {
        const writer = new SessionWriter(ctx);
        await writer.add(
          sessions.map((s) => {
            const text = JSON.stringify(
              fixtureSession(
                {
                  startTime: new Date(NOW - 600_000).toISOString(),
                  user: { native: { username: s.username } },
                },
                s.id,
              ),
            );
            return { text, value: JSON.parse(text) as unknown };
          }),
          NOW - 60_000,
        );
        await writer.drain();
      },
    );
  } finally {
    await api.close();
  }
}

/**
 * Every table of the database: its engine, a hash of its CREATE statement, and its rows (their
 * count and a sum of each row's cityHash64; FINAL for the engines whose merges fold rows, so a
 * merge running meanwhile changes nothing). `except`: tables the path under test writes itself.
 */
async function fingerprint(
  except: readonly string[] = [],
): Promise<Record<string, string>> {
  const tables = await select<{
    name: string;
    engine: string;
    create_table_query: string;
  }>(
    w,
    "SELECT name, engine, create_table_query FROM system.tables WHERE database = {db:String} ORDER BY name",
    { db: w.database },
  );
  const out: Record<string, string> = {};
  for (const t of tables) {
    if (except.includes(t.name)) continue;
    const ddl = createHash("sha256").update(t.create_table_query).digest("hex");
    let rows = "";
    if (t.engine.endsWith("MergeTree")) {
      const final = t.engine === "MergeTree" ? "" : " FINAL";
      const [r] = await select<{ n: string; h: string }>(
        w,
        `SELECT count() AS n, toString(sum(cityHash64(*))) AS h FROM {db}.${quoteIdent(t.name)}${final}`,
      );
      rows = `${r?.n} rows, ${r?.h}`;
    }
    out[t.name] = `${t.engine} ${ddl} ${rows}`;
  }
  return out;
}

/**
 * `fn` with the embedded data directory free for a child process (the engine allows one
 * process per directory): the warehouse is closed before and opened again after.
 */
async function engineFree<T>(fn: () => Promise<T>): Promise<T> {
  if (w.kind !== "embedded") return fn();
  await w.close();
  try {
    return await fn();
  } finally {
    w = await openWarehouse(config);
  }
}

const cliEnv = (rulesDir: string) =>
  cleanEnv({
    SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
    SESSIONHOUSE_API_KEY: "test-key-0000",
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_URL: config.clickhouse.url,
    CLICKHOUSE_DATABASE: w.database,
    SESSIONHOUSE_DETECTIONS_DIR: rulesDir,
    SESSIONHOUSE_LOG_LEVEL: "warn",
  });

const detectTest = (rulesDir: string) =>
  runCli(
    cli(),
    ["detect", "test", "--dir", rulesDir],
    cliEnv(rulesDir),
    120_000,
  );

/** `detect run` of rule `id`: the built CLI as a child, or its main in this process. */
async function detectRun(
  rulesDir: string,
  id: string,
  via: "child" | "in-process",
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const args = ["detect", "run", "--rule", id, "--from", "-1d"];
  args.push("--format", "json");
  if (via === "child")
    return engineFree(() => runCli(cli(), args, cliEnv(rulesDir), 120_000));
  // In process, the CLI's connections share this process's engine with `w`.
  const env = cliEnv(rulesDir);
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) own[k] = v;
  const r = await mainInProcess(own, ...args);
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The detections job of `run`, once, with `rulesDir` as detections.dir; its error, if any. */
async function detectionsJob(rulesDir: string): Promise<unknown> {
  const own: Config = {
    ...config,
    detections: { ...config.detections, dir: rulesDir },
  };
  const plan = planJobs(own).find((p) => p.name === "detections");
  const api = ControlPlaneApi.fromConfig(own);
  try {
    const [job] = pipelineJobs(
      {
        config: own,
        api,
        warehouse: w,
        logger: createLogger({ level: "silent" }),
      },
      plan ? [plan] : [],
    );
    const idle = new AbortController().signal;
    return await job?.run({ signal: idle, stopping: idle }).then(
      () => undefined,
      (err: unknown) => err,
    );
  } finally {
    await api.close();
  }
}

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  // The legal-hold log, in two parts (two inserts), and a session of each Sigma case.
  for (const hold of ["h-1", "h-2"])
    await w.client.command({
      query: `INSERT INTO ${quoteIdent(w.database)}.legal_hold_events (at, hold_id, action, actor, reason, rows) SELECT now64(3), '${hold}', 'add', 'counsel', 'matter ${hold}', 3`,
    });
  await store(
    SIGMA.flatMap((c, i) => [
      { id: `sigma-${i}`, username: c.fires },
      { id: `sigma-${i}-near`, username: c.quiet },
    ]),
  );
}, 120_000);

afterAll(async () => {
  await w?.close();
});

interface Abuse {
  id: string;
  sql: string;
  /** Only the engine refuses it, when it runs (readonly = 1): it reads as a SELECT. */
  atRunTime?: true;
}

const ABUSE: readonly Abuse[] = [
  {
    id: "alter-delete",
    sql: `ALTER TABLE legal_hold_events DELETE WHERE 1 OR ${FROM} < now()`,
  },
  {
    id: "insert",
    sql: `INSERT INTO legal_hold_events (at, hold_id, action, actor, reason, rows) SELECT ${FROM}, 'h-1', 'release', 'a rule', 'forged', 0`,
  },
  { id: "truncate", sql: `TRUNCATE TABLE legal_hold_events -- ${FROM}` },
  { id: "drop", sql: `DROP TABLE legal_hold_events -- ${FROM}` },
  {
    id: "optimize",
    sql: `OPTIMIZE TABLE legal_hold_events FINAL -- ${FROM}`,
  },
  { id: "system", sql: `SYSTEM STOP MERGES -- ${FROM}` },
  { id: "kill", sql: `KILL QUERY WHERE 1 -- ${FROM}` },
  {
    id: "outfile",
    sql: `SELECT id AS session_id, start_time AS event_time FROM {{sessions}} INTO OUTFILE '${TRAP}/owned.txt'`,
  },
  {
    id: "two-statements",
    sql: "SELECT id AS session_id, start_time AS event_time FROM {{sessions}}; TRUNCATE TABLE legal_hold_events",
  },
  {
    id: "host-file",
    sql: "SELECT id AS session_id, start_time AS event_time, line FROM {{sessions}} AS s, file('/etc/passwd', 'LineAsString', 'line String') AS f",
    atRunTime: true,
  },
];

const abuseRule = (a: Abuse) =>
  ruleDir(a.id, ruleFile(a.id, `sql: |\n  ${a.sql}`));

/** The refusal of `a`'s rule file, as the CLI prints it and the job records it. */
const refusal = (a: Abuse, file: string) =>
  `${file}:6: rule ${a.id}: not run, as a rule may only read: `;

/**
 * The rules `detect test` is tried with, one for each way it refuses: alter-delete, a statement
 * the engine parses and checkRules refuses before any fixture runs; two-statements, SQL the engine
 * cannot parse as one statement; host-file, a SELECT only the engine refuses, while fixtures run.
 * The other kinds take alter-delete's way through the same checkRules call (`detect test` starts
 * a fresh scratch engine each time); `detect run` and the detections job try every kind.
 */
const DETECT_TEST_KINDS = ["alter-delete", "two-statements", "host-file"];

describe("a rule whose SQL is not a read", () => {
  it.each(ABUSE.filter((a) => DETECT_TEST_KINDS.includes(a.id)))(
    "$id: detect test refuses it (exit 2), runs no fixture, writes no file",
    async (a) => {
      const { dir, file } = abuseRule(a);
      const before = await fingerprint();
      const r = await detectTest(dir);
      expect(r.stderr).toContain(`error: ${refusal(a, file)}`);
      expect(r.stderr).toContain("hint: make the rule's sql one SELECT");
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.code).toBe(2);
      // Refused before any fixture ran, unless only the engine could tell.
      if (!a.atRunTime) expect(r.stdout).not.toMatch(/^(ok|FAIL) /m);
      expect(readdirSync(TRAP)).toEqual([]);
      expect(await fingerprint()).toEqual(before);
    },
    120_000,
  );

  it.each(ABUSE)(
    "$id: detect run refuses it (exit 2), and every table holds what it held",
    async (a) => {
      const { dir, file } = abuseRule(a);
      const before = await fingerprint();
      const r = await detectRun(
        dir,
        a.id,
        a === ABUSE[0] ? "child" : "in-process",
      );
      expect(r.stderr).toContain(`error: ${refusal(a, file)}`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(readdirSync(TRAP)).toEqual([]);
      expect(await fingerprint()).toEqual(before);
    },
    120_000,
  );

  it.each(ABUSE)(
    "$id: the detections job of run refuses it, records the failure, and changes no table",
    async (a) => {
      const { dir, file } = abuseRule(a);
      // The job records its own run (runs); a rule only the engine refuses fails when its turn
      // comes, after the shipped rules before it recorded their hits and checkpoints.
      const own = a.atRunTime
        ? ["runs", "detection_hits", "checkpoints"]
        : ["runs"];
      const before = await fingerprint(own);
      const err = await detectionsJob(dir);
      expect((err as Error | undefined)?.message).toContain(refusal(a, file));
      const [run] = await select<{ status: string; error: string }>(
        w,
        "SELECT status, error FROM {db}.runs FINAL WHERE job = 'detections' ORDER BY started_at DESC LIMIT 1",
      );
      expect(run?.status).toBe("failed");
      expect(run?.error).toContain(refusal(a, file));
      const [recorded] = await select<{ n: string }>(
        w,
        "SELECT (SELECT count() FROM {db}.detection_hits WHERE rule_id = {rule:String}) + (SELECT count() FROM {db}.checkpoints WHERE stream = {stream:String}) AS n",
        { rule: a.id, stream: `detections.${a.id}` },
      );
      expect(Number(recorded?.n)).toBe(0);
      expect(readdirSync(TRAP)).toEqual([]);
      expect(await fingerprint(own)).toEqual(before);
    },
    120_000,
  );
});

/** A Sigma value written to break quoting, a session name it must match and one it must not. */
interface SigmaCase {
  name: string;
  /** The selection's field with its modifiers. */
  field: string;
  /** The value as the Sigma rule holds it. */
  value: string;
  fires: string;
  quiet: string;
}

const SIGMA: readonly SigmaCase[] = [
  {
    name: "a quote",
    field: "user.name",
    value: "o'brien",
    fires: "o'brien",
    quiet: "o'brie",
  },
  {
    name: "a backslash before a quote",
    field: "user.name",
    value: "x\\'; SELECT 1",
    fires: "x\\'; SELECT 1",
    quiet: "x'; SELECT 1",
  },
  {
    name: "a query parameter",
    field: "user.name",
    value: "{window_from:String}",
    fires: "{window_from:String}",
    quiet: "{window_from:String",
  },
  {
    name: "a statement after a quote",
    field: "user.name",
    value: "'); DROP TABLE legal_hold_events; --",
    fires: "'); DROP TABLE legal_hold_events; --",
    quiet: "'); DROP TABLE legal_hold_events; -",
  },
  {
    name: "a newline and comment markers",
    field: "user.name",
    value: "a\n/* b */ -- c #",
    fires: "a\n/* b */ -- c #",
    quiet: "a /* b */ -- c #",
  },
  {
    name: "LIKE's own characters in contains, a Sigma-escaped backslash last",
    field: "user.name|contains",
    value: "50%_o'f\\\\",
    fires: "x50%_o'f\\y",
    quiet: "x50X_o'f\\y",
  },
];

function sigmaRule(c: SigmaCase, i: number): string {
  const session = (name: string) =>
    `[{ user: { native: { username: ${JSON.stringify(name)} } } }]`;
  return ruleFile(
    `sigma-${i}`,
    `sigma:
  logsource: { product: sessionhouse, category: database }
  detection:
    sel:
      ${c.field}: ${JSON.stringify(c.value)}
    condition: sel`,
    `  - { name: the value, fires: true, sessions: ${session(c.fires)} }
  - { name: a near miss, fires: false, sessions: ${session(c.quiet)} }
  - { name: another session, fires: false, sessions: [{}] }`,
  );
}

/** One directory with a rule of each Sigma case. */
function sigmaDir(): string {
  const dir = mkdtempSync(join(testTmpDir(), "rule-abuse-sigma-"));
  SIGMA.forEach((c, i) =>
    writeFileSync(join(dir, `sigma-${i}.yaml`), sigmaRule(c, i)),
  );
  return dir;
}

describe("Sigma values crafted to break quoting", () => {
  it("match exactly the sessions holding them in detect test, every fixture ok", async () => {
    const before = await fingerprint();
    const r = await detectTest(sigmaDir());
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      `${SIGMA.length} rules, ${SIGMA.length * 3} fixtures, 0 failed`,
    );
    expect(readdirSync(TRAP)).toEqual([]);
    expect(await fingerprint()).toEqual(before);
  }, 120_000);

  it.each(SIGMA.map((c, i) => ({ ...c, i })))(
    "$name: detect run finds exactly the session holding the value",
    async (c) => {
      const before = await fingerprint();
      const r = await detectRun(
        sigmaDir(),
        `sigma-${c.i}`,
        c.i === 0 ? "child" : "in-process",
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const hits = JSON.parse(r.stdout) as { session_id: string }[];
      expect(hits.map((h) => h.session_id)).toEqual([`sigma-${c.i}`]);
      expect(await fingerprint()).toEqual(before);
    },
    120_000,
  );

  it("on arrival, the detections job records exactly the sessions holding them", async () => {
    // The job writes its hits, its checkpoints and its run; nothing else may change.
    const own = ["detection_hits", "checkpoints", "runs"];
    const before = await fingerprint(own);
    expect(await detectionsJob(sigmaDir())).toBeUndefined();
    for (let i = 0; i < SIGMA.length; i++) {
      const hits = await select<{ session_id: string }>(
        w,
        "SELECT session_id FROM {db}.detection_hits FINAL WHERE rule_id = {rule:String}",
        { rule: `sigma-${i}` },
      );
      expect(hits.map((h) => h.session_id)).toEqual([`sigma-${i}`]);
    }
    expect(readdirSync(TRAP)).toEqual([]);
    expect(await fingerprint(own)).toEqual(before);
  }, 120_000);
});
