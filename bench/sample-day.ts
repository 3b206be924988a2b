// The scale scenario's sample day checked against a sync: one day of the scenario generated
// into a database (as bench/scale.ts writes the whole year), its raw records served by the
// simulator in replay mode, `sync sessions` of that day into a second database, both rolled up
// as `run` does, then every table the scenario writes for the day compared between the two.
// Also compares the generated day's distributions with a simulator day of the same size.
// See docs/performance.md, "The sample day".
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ControlPlaneApi } from "../src/api/control-plane.js";
import type { Config } from "../src/config/index.js";
import { withRun } from "../src/pipeline/context.js";
import { rollUp } from "../src/pipeline/rollups.js";
import { syncSessions } from "../src/pipeline/session-sync.js";
import { SimClock, startSimulator } from "../src/simulator/index.js";
import { createLogger } from "../src/util/logger.js";
import {
  quoteIdent,
  quoteString,
  type Warehouse,
} from "../src/warehouse/index.js";
import { END_MS, generateSessions, type Population } from "./dashboards.js";
import type { Shape } from "./org-scenario.js";
import {
  compareDistributions,
  type DistributionCheck,
} from "./sample-distributions.js";

const DAY = 86_400_000;
/** The sample day: the scenario's last whole day (2026-11-15, open and late sessions in it). */
const SAMPLE_DAY_MS = END_MS - DAY;
const API_KEY = "sample-day-key-4c1e";

/** A migrated database, and the configuration it was opened with. */
export interface Db {
  config: Config;
  warehouse: Warehouse;
}

export interface SampleDayOptions {
  /** Sessions of the whole scenario (its year); the day holds about 1/365 of them. */
  sessions: number;
  population: Population;
  /** The scenario's shape (default the organisation). */
  shape?: Shape;
  /** The database the generator writes the day into. */
  generated: Db;
  /** Opens the (migrated, empty) database the sync writes, reading the API at `apiUrl`. */
  openSynced(apiUrl: string, apiKey: string): Promise<Db>;
  dayMs?: number;
}

/** One table compared: its rows in each database, and what differs. */
export interface TableComparison {
  table: string;
  generatedRows: number;
  syncedRows: number;
  /** Rows of one side with no equal row on the other (a few shown), per side. */
  onlyGenerated: number;
  onlySynced: number;
  examples: string[];
  /** For `sessions`: the columns that differ, with the sessions they differ in. */
  columns?: Record<string, number>;
  /** Keys whose t-digest quantiles differ beyond the tolerance (see TDIGEST_TOLERANCE). */
  tdigestDiffer?: number;
}

export interface SampleDayResult {
  day: string;
  sessions: number;
  tables: TableComparison[];
  deadLetters: number;
  distributions: DistributionCheck[];
  /** Every difference, one line each; empty when the tables equal a sync. */
  differences: string[];
}

/**
 * Columns left out of the comparison, because they differ by nature between a load and a
 * sync: when a row was fetched (`fetched_at`; the generator dates each read near the session's
 * start, the sync when it ran), and the latest fetch a rollup day saw (`source_fetched_max`).
 * `version` is its status rank plus the fetch time in ms: the rank is compared, the fetch time
 * is not.
 */
const NOT_COMPARED = ["fetched_at", "source_fetched_max"] as const;

/**
 * A t-digest's quantiles depend on the order its states are merged in, which the engine's
 * threads decide: they are compared per key, each within this share of the larger value (a
 * key with no duration has NaN on both sides).
 */
const TDIGEST_TOLERANCE = 0.05;

interface TableSpec {
  table: string;
  /** The SELECT list compared (per row). */
  select: string;
  /** FROM … WHERE … for one database (`t` is its quoted name). */
  from: (db: string, day: string) => string;
  /** Columns compared per key within TDIGEST_TOLERANCE, and the key (the table's order). */
  tdigest?: { key: string[]; columns: string[] };
}

const rank = "version - toUnixTimestamp64Milli(fetched_at) AS version_rank";

async function columnsOf(
  w: Warehouse,
  table: string,
): Promise<{ exact: string[]; tdigest: string[] }> {
  const rs = await w.client.query({
    query: `SELECT name, type FROM system.columns WHERE database = {db:String} AND table = {t:String} ORDER BY position`,
    query_params: { db: w.database, t: table },
    format: "JSONEachRow",
  });
  const all = (await rs.json<{ name: string; type: string }>()).filter(
    (c) => !(NOT_COMPARED as readonly string[]).includes(c.name),
  );
  const tdigest = (c: { type: string }) => c.type.includes("TDigest");
  const exact = all
    .filter((c) => !tdigest(c))
    .map((c) =>
      c.name === "version"
        ? rank
        : c.type.startsWith("AggregateFunction")
          ? `finalizeAggregation(${quoteIdent(c.name)}) AS ${quoteIdent(c.name)}`
          : quoteIdent(c.name),
    );
  return { exact, tdigest: all.filter(tdigest).map((c) => c.name) };
}

async function sortingKey(w: Warehouse, table: string): Promise<string[]> {
  const [t] = await rows<{ key: string }>(
    w,
    `SELECT sorting_key AS key FROM system.tables WHERE database = ${quoteString(w.database)} AND name = ${quoteString(table)}`,
  );
  return (t?.key ?? "").split(",").map((k) => k.trim());
}

/** The tables the scenario writes for a day of sessions, each as it is read. */
async function tableSpecs(w: Warehouse): Promise<TableSpec[]> {
  const whole = async (
    table: string,
    where: (day: string) => string,
  ): Promise<TableSpec> => {
    const { exact, tdigest } = await columnsOf(w, table);
    return {
      table,
      select: exact.join(", "),
      from: (db, day) => `${db}.${table} FINAL WHERE ${where(day)}`,
      ...(tdigest.length === 0
        ? {}
        : { tdigest: { key: await sortingKey(w, table), columns: tdigest } }),
    };
  };
  const ofDay = (day: string) => `toDate(start_time) = '${day}'`;
  return [
    await whole("sessions", ofDay),
    await whole("session_keys", ofDay),
    // Materialized views' targets: read as the dashboards do, merged per key.
    {
      table: "user_resource_first_seen",
      select: "user_key, resource_name, min(first_seen)",
      from: (db) =>
        `${db}.user_resource_first_seen GROUP BY user_key, resource_name`,
    },
    {
      table: "user_active_days",
      select: "user_key, day, min(first_start), max(last_start)",
      from: (db) => `${db}.user_active_days GROUP BY user_key, day`,
    },
    await whole("session_rollups_daily", (day) => `day = '${day}'`),
    await whole("session_technology_rollups_daily", (day) => `day = '${day}'`),
    await whole("group_resource_rollups_daily", (day) => `day = '${day}'`),
    await whole("rollup_days", (day) => `day = '${day}'`),
  ];
}

async function rows<T>(w: Warehouse, sql: string): Promise<T[]> {
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  return rs.json<T>();
}

async function count(w: Warehouse, sql: string): Promise<number> {
  const [r] = await rows<{ n: string }>(w, `SELECT count() AS n FROM (${sql})`);
  return Number(r?.n ?? 0);
}

/** Keys whose t-digest quantiles differ by more than TDIGEST_TOLERANCE between the two. */
async function tdigestDiffer(
  w: Warehouse,
  spec: TableSpec,
  dbs: { generated: string; synced: string },
  day: string,
): Promise<number> {
  const { key, columns } = spec.tdigest as NonNullable<TableSpec["tdigest"]>;
  const keys = key.map((k) => quoteIdent(k)).join(", ");
  const side = (db: string) =>
    `(SELECT ${keys}, ${columns.map((c) => `finalizeAggregation(${quoteIdent(c)}) AS ${quoteIdent(c)}`).join(", ")} FROM ${spec.from(db, day)})`;
  const far = columns.map(
    (c) =>
      `NOT arrayAll((x, y) -> (isNaN(x) AND isNaN(y)) OR abs(x - y) <= ${TDIGEST_TOLERANCE} * greatest(abs(x), abs(y)), a.${quoteIdent(c)}, b.${quoteIdent(c)})`,
  );
  return count(
    w,
    `SELECT 1 FROM ${side(dbs.generated)} AS a INNER JOIN ${side(dbs.synced)} AS b USING (${keys}) WHERE ${far.join(" OR ")}`,
  );
}

/** Both databases live in one engine (or server): `w` reads across them. */
async function compareTable(
  w: Warehouse,
  spec: TableSpec,
  dbs: { generated: string; synced: string },
  day: string,
): Promise<TableComparison> {
  const side = (db: string) =>
    `SELECT ${spec.select} FROM ${spec.from(db, day)}`;
  const a = side(dbs.generated);
  const b = side(dbs.synced);
  const onlyA = `${a} EXCEPT ${b}`;
  const onlyB = `${b} EXCEPT ${a}`;
  const shown = async (sql: string, label: string) =>
    (await rows<Record<string, unknown>>(w, `${sql} LIMIT 2`)).map(
      (r) => `${label}: ${JSON.stringify(r).slice(0, 600)}`,
    );
  const result: TableComparison = {
    table: spec.table,
    generatedRows: await count(w, a),
    syncedRows: await count(w, b),
    onlyGenerated: await count(w, onlyA),
    onlySynced: await count(w, onlyB),
    examples: [],
  };
  if (spec.tdigest !== undefined)
    result.tdigestDiffer = await tdigestDiffer(w, spec, dbs, day);
  if (result.onlyGenerated + result.onlySynced > 0)
    result.examples = [
      ...(await shown(onlyA, "generated only")),
      ...(await shown(onlyB, "synced only")),
    ];
  return result;
}

/** For each column of `sessions`, the sessions of the day whose value differs between the two. */
async function sessionColumns(
  w: Warehouse,
  dbs: { generated: string; synced: string },
  day: string,
): Promise<Record<string, number>> {
  const names = (await columnsOf(w, "sessions")).exact
    .filter((c) => c !== rank)
    .map((c) => c.replaceAll("`", ""));
  const side = (db: string) =>
    `(SELECT *, user_key, ${rank} FROM ${db}.sessions FINAL WHERE toDate(start_time) = '${day}')`;
  const [r] = await rows<Record<string, string>>(
    w,
    `SELECT ${[...names, "version_rank"].map((c) => `countIf(NOT (a.${quoteIdent(c)} <=> b.${quoteIdent(c)})) AS ${quoteIdent(c)}`).join(", ")}
     FROM ${side(dbs.generated)} AS a INNER JOIN ${side(dbs.synced)} AS b ON a.id = b.id`,
  );
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(r ?? {}))
    if (Number(v) > 0) out[k] = Number(v);
  return out;
}

/** The day's raw records, one a line, in start order: what the replay serves. */
async function writeRecords(w: Warehouse, file: string, day: string) {
  const records = await rows<{ raw: string }>(
    w,
    `SELECT raw FROM ${quoteIdent(w.database)}.sessions FINAL WHERE toDate(start_time) = '${day}' ORDER BY start_time, id`,
  );
  writeFileSync(file, records.map((r) => r.raw).join("\n") + "\n");
  return records.length;
}

/** Generates the day, syncs it from a replay, rolls both up, compares. */
export async function checkSampleDay(
  o: SampleDayOptions,
): Promise<SampleDayResult> {
  const dayMs = o.dayMs ?? SAMPLE_DAY_MS;
  const day = new Date(dayMs).toISOString().slice(0, 10);
  const logger = createLogger({ level: "silent" });
  const a = o.generated;
  const shape = o.shape ?? "org";
  await generateSessions(
    a.warehouse,
    o.sessions,
    o.population,
    undefined,
    { fromMs: dayMs, toMs: dayMs + DAY },
    shape,
  );
  // The day holds sessions still open at the end, so `run` rolls it up once it has settled.
  const rollUpAt = Math.max(
    END_MS,
    dayMs + DAY + a.config.retention.settleAfterMs,
  );
  await rollUp({ config: a.config, warehouse: a.warehouse, logger }, rollUpAt);

  const dir = mkdtempSync(join(tmpdir(), "sessionhouse-sample-day-"));
  const file = join(dir, "sessions.jsonl");
  const sessions = await writeRecords(a.warehouse, file, day);
  const sim = await startSimulator({
    apiKey: API_KEY,
    clock: SimClock.fixed(END_MS),
    replaySessions: file,
    logAggregations: false,
    directory: false,
  });
  let b: Db | undefined;
  try {
    b = await o.openSynced(sim.url, API_KEY);
    const synced = b;
    const api = ControlPlaneApi.fromConfig(synced.config, logger);
    try {
      await withRun(
        { config: synced.config, api, warehouse: synced.warehouse, logger },
        "sessions",
        (ctx) =>
          syncSessions(ctx, {
            fromMs: dayMs,
            toMs: dayMs + DAY,
            nowMs: END_MS,
          }),
      );
    } finally {
      await api.close();
    }
    await rollUp(
      { config: synced.config, warehouse: synced.warehouse, logger },
      rollUpAt,
    );
    return await compareSampleDay(a, synced, {
      day,
      dayMs,
      sessions,
      shape,
      yearSessions: o.sessions,
    });
  } finally {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Compares the day in the generated database `a` with the synced `b` (both in one engine or
 * server): every table, the dead letters, and the generated day's distributions.
 */
export async function compareSampleDay(
  a: Db,
  b: Db,
  c: {
    day: string;
    dayMs: number;
    sessions: number;
    shape: Shape;
    yearSessions: number;
  },
): Promise<SampleDayResult> {
  const w = a.warehouse;
  const dbs = {
    generated: quoteIdent(a.warehouse.database),
    synced: quoteIdent(b.warehouse.database),
  };
  const tables: TableComparison[] = [];
  for (const spec of await tableSpecs(w))
    tables.push(await compareTable(w, spec, dbs, c.day));
  const sessionsTable = tables[0];
  if (
    sessionsTable &&
    sessionsTable.onlyGenerated + sessionsTable.onlySynced > 0
  )
    sessionsTable.columns = await sessionColumns(w, dbs, c.day);
  const deadLetters =
    (await count(w, `SELECT 1 FROM ${dbs.generated}.dead_letters`)) +
    (await count(w, `SELECT 1 FROM ${dbs.synced}.dead_letters`));
  const distributions = await compareDistributions(w, dbs.generated, {
    day: c.day,
    dayMs: c.dayMs,
    endMs: END_MS,
    shape: c.shape,
    yearSessions: c.yearSessions,
  });
  const differences: string[] = [];
  if (deadLetters > 0)
    differences.push(
      `dead_letters: ${deadLetters} records of the day could not be stored`,
    );
  for (const t of tables) {
    if ((t.tdigestDiffer ?? 0) > 0)
      differences.push(
        `${t.table}: ${t.tdigestDiffer} keys whose t-digest quantiles differ by more than ${100 * TDIGEST_TOLERANCE} %`,
      );
    if (
      t.onlyGenerated + t.onlySynced === 0 &&
      t.generatedRows === t.syncedRows
    )
      continue;
    const cols = t.columns
      ? `; columns that differ: ${Object.entries(t.columns)
          .map(([k, v]) => `${k} (${v} sessions)`)
          .join(", ")}`
      : "";
    differences.push(
      `${t.table}: ${t.generatedRows} rows generated, ${t.syncedRows} synced, ${t.onlyGenerated} only generated, ${t.onlySynced} only synced${cols}`,
      ...t.examples.map((e) => `  ${e}`),
    );
  }
  // The uniform shape is not an organisation's: its shape measures are printed, not held to.
  for (const d of distributions)
    if (!d.within && (d.shape !== true || c.shape === "org"))
      differences.push(
        `distribution ${d.measure}: generated ${shown(d, d.generated)}, simulator ${shown(d, d.simulator)} (tolerance ±${shown(d, d.tolerance)})`,
      );
  return {
    day: c.day,
    sessions: c.sessions,
    tables,
    deadLetters,
    distributions,
    differences,
  };
}

/** A distribution's value as printed: a share in %, a mean or rate to two decimals. */
export const shown = (d: Pick<DistributionCheck, "unit">, x: number): string =>
  d.unit === "share" ? `${(100 * x).toFixed(2)} %` : x.toFixed(2);
