// Every schema state main has had, upgraded to head: test/fixtures/upgrade/<state>/ holds the
// tables of a database synced by that commit's own CLI (scripts/upgrade-fixtures.mjs; its
// manifest names the commit and the migrations that version recorded). For each state the
// tables are created by that state's migration files, the rows loaded, and `sessionhouse migrate`
// run to head: no row is lost, the sessions under FINAL and the checkpoints are as they were,
// every dashboard panel's SQL runs, and a sessions sync continues from the checkpoint without
// storing any session twice.
//
// `migrate` runs as the built binary (a child process) for the oldest state, the widest
// upgrade, and as the CLI's main in this process for the others: what each state proves is its
// own rows, checkpoints and ledger through the same command, which a process start adds nothing
// to. Main opens the data directory beside a connection this file holds from the child's run to
// its end, on the engine already up: a first connection would load every table of the data
// directory again (most of a state's time went to that, twice per state). Each state's database
// is dropped when its case ends.
//
// The states' migration files are run by today's runner once each: a state whose files are an
// earlier state's and some of higher versions gets that state's tables as its files left them
// (captured before its rows were loaded, replayed by schema-template.ts), then its own files.
//
// The dashboards run once, after every state, over one database holding the rows of every
// upgraded state (each state's tables copied into it after its upgrade, by column name): every
// panel still reads every state's upgraded rows, in one pass instead of one per state.
import { createReadStream, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { SESSIONS_JOB } from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { startSimulator } from "../../../src/simulator/index.js";
import { SimClock } from "../../../src/simulator/clock.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { migrate, MIGRATIONS_DIR } from "../../../src/warehouse/migrate.js";
import { quoteIdent, quoteString } from "../../../src/warehouse/sql.js";
import { cleanEnv, privateCli, runCli } from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { loadDashboards } from "../../helpers/dashboards.js";
import {
  resolveVariables,
  runPanel,
  useDatabase,
} from "../../helpers/panels.js";
import { migrationsSubset } from "../../helpers/schema-snapshot.js";
import {
  captureTemplate,
  replayTemplate,
  type SchemaTemplate,
} from "../../helpers/schema-template.js";
import { API_KEY, run, runDeps } from "../../helpers/simulator.js";
import {
  freshDatabaseName,
  migratedWarehouse,
  select,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

const FIXTURES = new URL("../../fixtures/upgrade/", import.meta.url).pathname;

interface Manifest {
  commit: string;
  migrations: { version: number; name: string; checksum: string }[];
  tables: { name: string; engine: string; rows: number; columns: string[] }[];
}

const STATES = readdirSync(FIXTURES)
  .sort()
  .map((name) => ({
    name,
    dir: join(FIXTURES, name),
    manifest: JSON.parse(
      readFileSync(join(FIXTURES, name, "manifest.json"), "utf8"),
    ) as Manifest,
  }));

const cli = privateCli();

/** `sessionhouse migrate` on the database: the built binary as a child, or main in process. */
async function migrateCommand(
  database: string,
  child: boolean,
): Promise<{ code: number | null; stderr: string }> {
  const env = {
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: database,
    SESSIONHOUSE_LOG_LEVEL: "warn",
    ...(process.env.CLICKHOUSE_URL
      ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL }
      : {}),
  };
  if (child) return runCli(cli(), ["migrate"], cleanEnv(env));
  const r = await mainInProcess(env, "migrate");
  return { code: r.status, stderr: r.stderr };
}

/**
 * Each state's tables as its own migration files left them (before its rows were loaded): a
 * later state whose files are those and some of higher versions starts from them.
 */
const created: { versions: number[]; template: SchemaTemplate }[] = [];

/**
 * The earlier state to start from: the one with the most files among those whose files are all
 * the state's and below every file the state adds (so the runner applies the added files in the
 * order the state's own history did).
 */
function startingState(versions: readonly number[]) {
  let best: (typeof created)[number] | undefined;
  for (const c of created) {
    const last = c.versions.at(-1) ?? 0;
    const added = versions.filter((v) => !c.versions.includes(v));
    if (
      c.versions.every((v) => versions.includes(v)) &&
      added.every((v) => v > last) &&
      c.versions.length > (best?.versions.length ?? 0)
    )
      best = c;
  }
  return best;
}

/**
 * The tables of the state: its own migration files, run by today's runner. The files it shares
 * with an earlier state ran once, for that state: their tables are replayed from its capture
 * (schema-template.ts: one CREATE per object and the ledger's rows), and the runner applies the
 * state's other files on top.
 */
async function createState(w: Warehouse, m: Manifest): Promise<void> {
  const names = new Set(m.migrations.map((x) => x.name));
  const versions = m.migrations.map((x) => x.version);
  const from = startingState(versions);
  if (from) await replayTemplate(w, from.template);
  await migrate(w, {
    dir: migrationsSubset((f) => names.has(f)),
    to: versions.at(-1),
  });
  created.push({ versions, template: await captureTemplate(w) });
}

/** Loads the dumped rows, with the materialized views detached (their rows are in the dump). */
async function load(w: Warehouse, dir: string, m: Manifest): Promise<void> {
  const db = quoteIdent(w.database);
  const views = await select<{ name: string }>(
    w,
    "SELECT name FROM system.tables WHERE database = {db:String} AND engine = 'MaterializedView'",
    { db: w.database },
  );
  for (const v of views)
    await w.client.command({
      query: `DETACH TABLE ${db}.${quoteIdent(v.name)}`,
    });
  // The ledger as that version wrote it replaces the one just written.
  await w.client.command({ query: `TRUNCATE TABLE ${db}.schema_migrations` });
  for (const t of m.tables) {
    if (t.rows === 0) continue;
    const file = join(dir, `${t.name}.native.gz`);
    const target = `${db}.${quoteIdent(t.name)} (${t.columns.map((c) => quoteIdent(c.split(" ")[0] ?? "")).join(", ")})`;
    // The rows as they were stored: a replacing table would otherwise merge a block's rows
    // of one key as it is inserted.
    const clickhouse_settings = { optimize_on_insert: 0 } as const;
    if (w.kind === "embedded")
      await w.client.command({
        query: `INSERT INTO ${target} FROM INFILE ${quoteString(file)} COMPRESSION 'gzip' FORMAT Native`,
        clickhouse_settings,
      });
    else {
      const r = await w.client.exec({
        query: `INSERT INTO ${target} FORMAT Native`,
        values: createReadStream(file).pipe(createGunzip()),
        clickhouse_settings,
      });
      r.stream.resume();
    }
  }
  for (const v of views)
    await w.client.command({
      query: `ATTACH TABLE ${db}.${quoteIdent(v.name)}`,
    });
}

async function counts(w: Warehouse): Promise<Map<string, number>> {
  const rows = await select<{ name: string; n: string }>(
    w,
    `SELECT name, toString(total_rows) AS n FROM system.tables
     WHERE database = {db:String} AND engine LIKE '%MergeTree%'`,
    { db: w.database },
  );
  return new Map(rows.map((r) => [r.name, Number(r.n)]));
}

async function sessionIds(w: Warehouse): Promise<string[]> {
  const rows = await select<{ id: string }>(
    w,
    "SELECT id FROM {db}.sessions FINAL ORDER BY id",
  );
  return rows.map((r) => r.id);
}

async function checkpoints(w: Warehouse) {
  return select<{ stream: string; position: string }>(
    w,
    "SELECT stream, position FROM {db}.checkpoints FINAL ORDER BY stream",
  );
}

/** Names of the materialized views of a database. */
async function viewNames(w: Warehouse, database: string): Promise<string[]> {
  const views = await select<{ name: string }>(
    w,
    "SELECT name FROM system.tables WHERE database = {db:String} AND engine = 'MaterializedView'",
    { db: database },
  );
  return views.map((v) => v.name);
}

/**
 * Copies the rows of every table of w's database into `union` (the head schema), by the
 * columns an insert writes, with the union's materialized views detached (their rows are
 * copied from their own tables).
 */
async function copyInto(w: Warehouse, union: string): Promise<void> {
  const [from, to] = [quoteIdent(w.database), quoteIdent(union)];
  const columns = await select<{ table: string; names: string[] }>(
    w,
    `SELECT table, groupArray(name) AS names FROM (
       SELECT table, name FROM system.columns
       WHERE database = {db:String} AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL')
         AND table IN (SELECT name FROM system.tables
                       WHERE database = {db:String} AND engine LIKE '%MergeTree%')
       ORDER BY table, position)
     GROUP BY table`,
    { db: union },
  );
  const views = await viewNames(w, union);
  for (const v of views)
    await w.client.command({ query: `DETACH TABLE ${to}.${quoteIdent(v)}` });
  try {
    for (const { table, names } of columns) {
      const list = names.map(quoteIdent).join(", ");
      const t = quoteIdent(table);
      await w.client.command({
        query: `INSERT INTO ${to}.${t} (${list}) SELECT ${list} FROM ${from}.${t}`,
        clickhouse_settings: { optimize_on_insert: 0 },
      });
    }
  } finally {
    for (const v of views)
      await w.client.command({ query: `ATTACH TABLE ${to}.${quoteIdent(v)}` });
  }
}

async function dashboardsRun(w: Warehouse, fromMs: number, toMs: number) {
  await useDatabase(w);
  const range = { fromMs, toMs };
  for (const { dashboard } of loadDashboards()) {
    const { variables } = await resolveVariables(w, dashboard, { range });
    for (const panel of dashboard.panels)
      await runPanel(w, dashboard, panel, range, variables);
  }
}

/** A sessions sync against today's simulator, seeded as the fixture's demo was, two hours later. */
async function syncLater(
  w: Warehouse,
  config: Config,
  checkpointMs: number,
): Promise<void> {
  const nowMs = checkpointMs + 2 * 3_600_000;
  const sim = await startSimulator({
    port: 0,
    seed: 7,
    apiKey: API_KEY,
    clock: new SimClock({ mode: "fixed", atMs: nowMs }),
    sessionsPerDay: 40,
    historyDays: 3,
  });
  try {
    const syncConfig: Config = {
      ...config,
      api: { ...config.api, url: sim.url, apiKey: API_KEY },
    };
    await run(runDeps(syncConfig, w), SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs, skipOpenRefresh: true }),
    );
  } finally {
    await sim.close();
  }
}

/** The database every upgraded state's rows are copied into, and the range they span. */
const union = {
  database: freshDatabaseName(),
  fromMs: Infinity,
  toMs: -Infinity,
  states: 0,
  /** The most sessions one state held: the union holds at least as many. */
  sessions: 0,
};

/**
 * A connection held from the first state's migrate (a child process, which needs the data
 * directory to itself) to the end of the file: the embedded engine then stays up between the
 * states, instead of loading every table again at each state's first connection.
 */
let engine: Warehouse | undefined;

beforeAll(async () => {
  const w = await migratedWarehouse(await testConfig({}, union.database));
  await w.close();
});
afterAll(async () => {
  await engine?.close();
});

describe.each(STATES.map((s, i) => ({ ...s, child: i === 0 })))(
  "a database at $name",
  ({ dir, manifest, child }) => {
    it(
      "is upgraded to head by migrate without losing a row, and syncs on from its checkpoint",
      { timeout: 600_000 },
      async () => {
        const database = freshDatabaseName();
        const config: Config = await testConfig({}, database);
        let w = await openWarehouse(config);
        await createState(w, manifest);
        await load(w, dir, manifest);
        const before = {
          counts: await counts(w),
          ids: await sessionIds(w),
          checkpoints: await checkpoints(w),
        };
        for (const t of manifest.tables)
          expect(before.counts.get(t.name), t.name).toBe(t.rows);
        // The child opens the data directory itself: this process lets go of it first. Main in
        // this process opens it beside the file's open connections, on the same engine.
        const reopen = child && w.kind === "embedded";
        if (reopen) await w.close();

        const migrated = await migrateCommand(database, child);
        expect(migrated.code, migrated.stderr).toBe(0);
        if (reopen) w = await openWarehouse(config);
        engine ??= await openWarehouse(await testConfig({}, union.database));
        try {
          const after = await counts(w);
          for (const [table, n] of before.counts)
            expect(after.get(table), `rows of ${table}`).toBeGreaterThanOrEqual(
              n,
            );
          expect(after.get("sessions")).toBe(before.counts.get("sessions"));
          expect(await sessionIds(w)).toEqual(before.ids);
          expect(await checkpoints(w)).toEqual(before.checkpoints);
          const ledger = await select<{ name: string }>(
            w,
            "SELECT name FROM {db}.schema_migrations WHERE version > 0 ORDER BY version",
          );
          expect(ledger.map((r) => r.name)).toEqual(
            readdirSync(child ? cli().migrations : MIGRATIONS_DIR)
              .filter((f) => /^\d{4}_.*\.sql$/.test(f))
              .sort(),
          );

          const position = before.checkpoints.find(
            (c) => c.stream === SESSIONS_JOB,
          )?.position;
          expect(position).toBeDefined();
          const checkpointMs = Date.parse(`${position ?? ""}Z`);
          const [first] = await select<{ t: string }>(
            w,
            "SELECT toString(min(start_time)) AS t FROM {db}.sessions",
          );
          union.fromMs = Math.min(
            union.fromMs,
            Date.parse(`${first?.t ?? ""}Z`),
          );
          union.toMs = Math.max(union.toMs, checkpointMs);
          await copyInto(w, union.database);
          union.states++;
          union.sessions = Math.max(union.sessions, before.ids.length);

          await syncLater(w, config, checkpointMs);
          const [dupes] = await select<{ n: string; ids: string }>(
            w,
            "SELECT toString(count()) AS n, toString(uniqExact(id)) AS ids FROM {db}.sessions FINAL",
          );
          expect(dupes?.n).toBe(dupes?.ids);
          const ids = new Set(await sessionIds(w));
          expect(before.ids.filter((id) => !ids.has(id))).toEqual([]);
          const moved = (await checkpoints(w)).find(
            (c) => c.stream === SESSIONS_JOB,
          );
          expect(Date.parse(`${moved?.position ?? ""}Z`)).toBeGreaterThan(
            checkpointMs,
          );
        } finally {
          // Done with: the engine does not keep its tables for the rest of the file.
          await w.client.command({
            query: `DROP DATABASE IF EXISTS ${quoteIdent(database)}`,
          });
          await w.close();
        }
      },
    );
  },
);

describe("every upgraded state's rows together", () => {
  let w: Warehouse | undefined;
  afterAll(async () => {
    await w?.close();
  });

  it("are read by every dashboard panel's SQL", async () => {
    expect(union.states).toBeGreaterThan(0);
    w = await openWarehouse(await testConfig({}, union.database));
    const [rows] = await select<{ n: string }>(
      w,
      "SELECT toString(uniqExact(id)) AS n FROM {db}.sessions",
    );
    expect(union.sessions).toBeGreaterThan(0);
    expect(Number(rows?.n)).toBeGreaterThanOrEqual(union.sessions);
    await dashboardsRun(w, union.fromMs, union.toMs);
  });
});
