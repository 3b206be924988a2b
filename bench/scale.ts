// The scale part of the bench: a year at enterprise size (BENCH_SCALE=1m, 10m or 100m sessions),
// generated inside the engine with INSERT … SELECT FROM numbers() into the tables the product
// writes (the sessions' raw record included, rollups computed by the product's own rollUp), a
// year of the default aggregation jobs, and a directory of 50,000 users, 20,000 native users
// with identity links and 1,000,000 inventory columns, each with a year of changes. Prints the
// load time and the disk each table takes, then every dashboard variable and panel as the
// Grafana plugin sends it over the last 24 h, 30 d and 365 d (those the loaded window holds),
// every filter at All and with one user and one resource chosen. `archive` and `report` are timed by bench/run.ts afterwards,
// through the CLI, each in a process of its own.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../src/config/index.js";
import { rollUp } from "../src/pipeline/rollups.js";
import { createLogger } from "../src/util/logger.js";
import {
  archiveSpecs,
  quoteIdent,
  storedColumns,
  type Warehouse,
} from "../src/warehouse/index.js";
import { loadDashboards } from "../test/helpers/dashboards.js";
import { panelSql, resolveVariables } from "../test/helpers/panels.js";
import { measure } from "./retention.js";
import {
  ENTERPRISE_ORG,
  enterpriseDimensions,
  identityLinks,
  orgInventory,
  SUSPENSIONS,
  UNLISTED_AFTER_SLOTS,
  type Shape,
} from "./org-scenario.js";
import { checkSampleDay } from "./sample-day.js";
import type { DistributionCheck } from "./sample-distributions.js";
import {
  loadWindow,
  monthBounds,
  scalePartAsked,
  rangesAsked,
  scaleShape,
  windowCovers,
} from "./scale-options.js";
import {
  queryInterval,
  renderQuery,
  type TimeRange,
} from "../test/helpers/grafana-sql.js";
import {
  END_MS,
  generateAggregations,
  generateSessions,
  openBench,
  type Population,
} from "./dashboards.js";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START_MS = END_MS - 365 * DAY;

/** An enterprise: 50,000 accounts (45,000 people), 2,000 resources. */
export const ENTERPRISE: Population = {
  users: 50_000,
  humans: 45_000,
  resources: 2_000,
  favourites: 30,
};

export interface ScaleLatency {
  dashboard: string;
  /** A panel's title, or "variable <name>". */
  query: string;
  range: string;
  filter: "all" | "one user and resource";
  p50: number;
  p95: number;
  rows: number;
  /**
   * The query did not finish: the engine stopped it at BENCH_SCALE_QUERY_CAP, or refused it
   * (p50 and p95 are then 0: the latencies travel as JSON, which has no Infinity or NaN).
   */
  stopped?: "cap" | "error";
}

export interface ScaleBench {
  sessions: number;
  loadMs: number;
  /** CPU the load took in this process (the embedded engine's included), user and system. */
  loadCpuMs: number;
  tables: Array<{ table: string; rows: number; bytes: number }>;
  /** The sessions table's columns on disk, largest first. */
  sessionColumns: Array<{
    column: string;
    bytes: number;
    uncompressed: number;
  }>;
  latencies: ScaleLatency[];
  /** The sample day checked against a sync, before the load (unless left out of the parts). */
  sample?: ScaleSample;
  /** The month `archive export` is timed on, its sessions, and the engine writing its files as Parquet. */
  month: string;
  monthSessions: number;
  directMs: number;
}

/** The scenario's shape (BENCH_SCALE_SHAPE): an organisation, or uniform at random. */
export const SCALE_SHAPE = scaleShape(process.env);

/** The sessions loaded when not the whole year (BENCH_SCALE_MONTH or BENCH_SCALE_DAYS). */
export const SCALE_WINDOW = loadWindow(process.env, END_MS);

/** The month measured: the loaded one (BENCH_SCALE_MONTH), else October 2026. */
export const SCALE_MONTH = SCALE_WINDOW?.month ?? "2026-10";

/**
 * Why the archive and the reports are not run on this load, or undefined when they are: they
 * are of one whole month, which the last N days (BENCH_SCALE_DAYS) do not hold.
 */
export const MONTH_PARTS_SKIPPED =
  SCALE_WINDOW?.days === undefined
    ? undefined
    : `${SCALE_WINDOW.label}: the archive and the reports are of a whole month, not in the window; load one with BENCH_SCALE_MONTH=YYYY-MM`;

/** The ranges the dashboards are measured over, and their days. */
export const SCALE_RANGES = [
  ["24 h", 1],
  ["30 d", 30],
  ["365 d", 365],
] as const;

/** Whether a range's sessions are all loaded, so its dashboards measure what the year would. */
export const rangeLoaded = (days: number): boolean =>
  windowCovers(SCALE_WINDOW, END_MS, days);

/** The ranges BENCH_SCALE_RANGES asks for, as SCALE_RANGES names them without the space. */
const RANGES_ASKED = rangesAsked(process.env);

/** Whether a range of SCALE_RANGES is asked for (BENCH_SCALE_RANGES). */
export const rangeAsked = (name: string): boolean =>
  RANGES_ASKED.has(name.replaceAll(" ", ""));

/** What the sample day's check found (bench/sample-day.ts). */
export interface ScaleSample {
  day: string;
  sessions: number;
  ms: number;
  differences: string[];
  /** The day's distributions against the simulator's (bench/sample-distributions.ts). */
  distributions: DistributionCheck[];
}

/**
 * The sample day of this scale checked against a sync of it, in two databases of its own in
 * `dataDir` (emptied first), dropped afterwards.
 */
async function sampleDay(
  dataDir: string,
  sessions: number,
): Promise<ScaleSample> {
  const started = performance.now();
  const generated = await openBench(dataDir, { database: "sample_generated" });
  const opened = [generated];
  try {
    const r = await checkSampleDay({
      sessions,
      population: ENTERPRISE,
      shape: SCALE_SHAPE,
      generated: { config: generated.config, warehouse: generated.w },
      openSynced: async (url, apiKey) => {
        const b = await openBench(dataDir, {
          database: "sample_synced",
          keep: true,
          env: {
            SESSIONHOUSE_API_URL: url,
            SESSIONHOUSE_API_KEY: apiKey,
            SESSIONHOUSE_MAX_RPS: "10000",
          },
        });
        opened.push(b);
        return { config: b.config, warehouse: b.w };
      },
    });
    const ms = performance.now() - started;
    return {
      day: r.day,
      sessions: r.sessions,
      ms,
      differences: r.differences,
      distributions: r.distributions,
    };
  } finally {
    for (const { w } of opened) {
      await command(w, `DROP DATABASE IF EXISTS ${quoteIdent(w.database)}`);
      await w.close();
    }
  }
}

/**
 * The engine writing the month's archive files itself, with its default settings: every table
 * `archive export` writes, the same columns and rows (FINAL, the month, the table's filter) in
 * the same order. What `archive export` is held to.
 */
async function directParquet(w: Warehouse, dataDir: string): Promise<number> {
  const { from, to } = monthBounds(SCALE_MONTH);
  const started = performance.now();
  for (const spec of await archiveSpecs(w)) {
    const columns = await storedColumns(w, spec.table);
    const file = join(dataDir, `direct-${spec.table}.parquet`);
    await command(
      w,
      `INSERT INTO FUNCTION file('${file}', 'Parquet')
       SELECT ${columns.map((c) => `\`${c.name}\``).join(", ")} FROM bench.\`${spec.table}\` FINAL
       WHERE ${spec.timeColumn} >= '${from}' AND ${spec.timeColumn} < '${to}'${spec.filter ? ` AND ${spec.filter}` : ""}
       ORDER BY ${spec.orderBy}`,
    );
  }
  const ms = performance.now() - started;
  for (const spec of await archiveSpecs(w))
    rmSync(join(dataDir, `direct-${spec.table}.parquet`), { force: true });
  return ms;
}

async function command(w: Warehouse, sql: string): Promise<void> {
  await w.client.command({
    query: sql,
    clickhouse_settings: { max_execution_time: 7200 },
  });
}

async function rows<T>(w: Warehouse, sql: string): Promise<T[]> {
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  return rs.json<T>();
}

/** Version k of object i: created in the first half of the year, changed every 90 days after. */
const validFrom = (salt: number) =>
  `fromUnixTimestamp64Milli(toInt64(${START_MS} + (cityHash64(i, ${salt}) % 180) * ${DAY} + k * ${90 * DAY}))`;

/** Object i's `versions` rows in `<table>_history` (the last one open). */
const historyRows = (
  w: Warehouse,
  table: string,
  columns: string,
  select: string,
  count: number,
  versions: number,
  salt: number,
) =>
  command(
    w,
    `INSERT INTO bench.${table}_history (id, valid_from, valid_to, ${columns}, content_hash, raw, observed_at, is_deleted, version)
       SELECT id, vf, if(k + 1 = ${versions}, NULL, vf + toIntervalDay(90)), ${columns}, hex(cityHash64(i, k)), raw, vf, 0, toUInt64(toUnixTimestamp64Milli(vf))
       FROM (SELECT i, k, ${validFrom(salt)} AS vf, ${select}
             FROM (SELECT intDiv(number, ${versions}) AS i, number % ${versions} AS k FROM numbers(${count * versions})))`,
  );

/** Object i's current row in `table`. */
const currentRows = (
  w: Warehouse,
  table: string,
  columns: string,
  select: string,
  count: number,
  salt: number,
) =>
  command(
    w,
    `INSERT INTO bench.${table} (id, ${columns}, created_at, updated_at, content_hash, raw, observed_at, is_deleted, version)
       SELECT id, ${columns}, vf, vf, hex(cityHash64(i, k)), raw, fromUnixTimestamp64Milli(${END_MS}), 0, ${END_MS}
       FROM (SELECT i, 0 AS k, ${validFrom(salt)} AS vf, ${select} FROM (SELECT number AS i FROM numbers(${count})))`,
  );

/**
 * The directory: every object's current row and its history, `versions` content versions an
 * object (the first at its creation, the others a change during the year; the last open).
 */
async function generateDirectory(w: Warehouse, shape: Shape): Promise<void> {
  const users = {
    columns: "email, full_name, type, group_ids",
    select: `concat('usr_', toString(i)) AS id, if(i < ${ENTERPRISE.humans}, concat('user', toString(i), '@acme.example'), '') AS email,
             concat('User ', toString(i)) AS full_name, if(i < ${ENTERPRISE.humans}, 'human', 'machine') AS type,
             [concat('group-', toString(i % 25))] AS group_ids,
             concat('{"id":"', id, '","email":"', email, '","fullName":"', full_name, '","type":"', type, '","groupIds":', toJSONString(group_ids), '}') AS raw`,
  };
  const native = {
    columns: "resource_id, username, credential_kinds",
    select: `concat('nu_', toString(i)) AS id, concat('res_', toString(i % ${ENTERPRISE.resources})) AS resource_id,
             arrayElement(['analyst', 'app_readonly', 'postgres', 'etl', 'svc'], 1 + i % 5) AS username, ['password'] AS credential_kinds,
             concat('{"id":"', id, '","resourceId":"', resource_id, '","username":"', username, '"}') AS raw`,
  };
  const links = {
    columns:
      "native_user_id, resource_id, native_username, identity_type, identity_id, user_email",
    select: `concat('nul_', toString(i)) AS id, concat('nu_', toString(i)) AS native_user_id, concat('res_', toString(i % ${ENTERPRISE.resources})) AS resource_id,
             arrayElement(['analyst', 'app_readonly', 'postgres', 'etl', 'svc'], 1 + i % 5) AS native_username, 'user' AS identity_type,
             concat('usr_', toString((i * 7 + k) % ${ENTERPRISE.humans})) AS identity_id, concat('user', toString((i * 7 + k) % ${ENTERPRISE.humans}), '@acme.example') AS user_email,
             concat('{"id":"', id, '","nativeUserId":"', native_user_id, '","identityType":"user","identityId":"', identity_id, '"}') AS raw`,
  };
  const org = shape === "org" ? orgLinks() : undefined;
  for (const [table, spec, count, versions, salt] of [
    ["users", users, 50_000, 3, 1],
    ["native_users", org?.native ?? native, org?.count ?? 20_000, 2, 2],
    [
      "native_user_identity_links",
      org?.links ?? links,
      org?.count ?? 20_000,
      2,
      3,
    ],
  ] as const) {
    await currentRows(w, table, spec.columns, spec.select, count, salt);
    await historyRows(
      w,
      table,
      spec.columns,
      spec.select,
      count,
      versions,
      salt,
    );
  }
  await generateInventory(w, shape);
}

/**
 * The data inventory (`inventory_columns` and its history, two versions a column): the org
 * shape's the organisation's (orgInventory), the uniform shape's a million columns over the
 * 2,000 resources, each of them holding every label.
 */
export async function generateInventory(
  w: Warehouse,
  shape: Shape,
): Promise<void> {
  const labels =
    "['email', 'phone', 'ssn', 'credit_card', 'name', 'address', 'iban', 'ip_address', '']";
  const inventory = {
    columns:
      "kind, resource_id, resource_name, path, name, data_type, data_label, data_labels",
    select: `concat('col_', toString(i)) AS id, 'column' AS kind, concat('res_', toString(i % ${ENTERPRISE.resources})) AS resource_id,
             concat('resource-', toString(i % ${ENTERPRISE.resources})) AS resource_name,
             concat('db', toString(i % 7), '.public.table', toString(intDiv(i, 20) % 5000)) AS path, concat('column_', toString(i % 20)) AS name,
             arrayElement(['text', 'int8', 'timestamptz', 'jsonb'], 1 + i % 4) AS data_type,
             arrayElement(${labels}, 1 + (i + k) % 9) AS data_label, if(data_label = '', [], [data_label]) AS data_labels,
             concat('{"id":"', id, '","kind":"column","path":"', path, '","name":"', name, '","dataType":"', data_type, '","dataLabel":"', data_label, '"}') AS raw`,
  };
  const inv =
    shape === "org"
      ? await orgInventorySpec(w, inventory.columns)
      : { spec: inventory, count: 1_000_000 };
  await currentRows(
    w,
    "inventory_columns",
    inv.spec.columns,
    inv.spec.select,
    inv.count,
    4,
  );
  await historyRows(
    w,
    "inventory_columns",
    inv.spec.columns,
    inv.spec.select,
    inv.count,
    2,
    4,
  );
  await command(w, `DROP TABLE IF EXISTS ${ORG_INVENTORY}`);
}

/** Where the org shape's inventory (orgInventory) is held while the directory is generated. */
const ORG_INVENTORY = "bench.scenario_inventory";

/**
 * The org shape's inventory_columns: the columns of the organisation's databases and warehouses
 * as the simulator lists them (orgInventory), loaded into ORG_INVENTORY and read by position.
 */
async function orgInventorySpec(
  w: Warehouse,
  columns: string,
): Promise<{ spec: { columns: string; select: string }; count: number }> {
  const rows = orgInventory(END_MS);
  await command(w, `DROP TABLE IF EXISTS ${ORG_INVENTORY}`);
  await command(
    w,
    `CREATE TABLE ${ORG_INVENTORY} (i UInt32, r UInt32, resource_name String, path String, name String, data_type String, data_label String) ENGINE = Memory`,
  );
  for (let i = 0; i < rows.length; i += 10_000)
    await w.client.insert({
      table: ORG_INVENTORY,
      values: rows.slice(i, i + 10_000).map((row, k) => ({ i: i + k, ...row })),
      format: "JSONEachRow",
    });
  // Each a constant array, read once a statement.
  const at = (c: string) =>
    `arrayElement((SELECT groupArray(${c}) FROM (SELECT ${c} FROM ${ORG_INVENTORY} ORDER BY i)), i + 1)`;
  return {
    count: rows.length,
    spec: {
      columns,
      select: `concat('col_', toString(i)) AS id, 'column' AS kind, concat('res_', toString(${at("r")})) AS resource_id,
             ${at("resource_name")} AS resource_name, ${at("path")} AS path, ${at("name")} AS name,
             ${at("data_type")} AS data_type, ${at("data_label")} AS data_label, if(data_label = '', [], [data_label]) AS data_labels,
             concat('{"id":"', id, '","kind":"column","path":"', path, '","name":"', name, '","dataType":"', data_type, '","dataLabel":"', data_label, '"}') AS raw`,
    },
  };
}

/**
 * The org shape's native users and identity links: every native user of the organisation's
 * resources, linked to a person who works on the resource or to a team (identityLinks).
 */
function orgLinks(): {
  count: number;
  native: { columns: string; select: string };
  links: { columns: string; select: string };
} {
  const rows = identityLinks(enterpriseDimensions());
  const list = (xs: readonly (string | number)[]) =>
    `[${xs.map((x) => (typeof x === "number" ? String(x) : `'${x}'`)).join(",")}]`;
  const at = (xs: readonly (string | number)[]) =>
    `arrayElement(${list(xs)}, i + 1)`;
  const base = `concat('res_', toString(${at(rows.map((l) => l.r))})) AS resource_id, ${at(rows.map((l) => l.native))} AS username`;
  return {
    count: rows.length,
    native: {
      columns: "resource_id, username, credential_kinds",
      select: `concat('nu_', toString(i)) AS id, ${base}, ['password'] AS credential_kinds,
               concat('{"id":"', id, '","resourceId":"', resource_id, '","username":"', username, '"}') AS raw`,
    },
    links: {
      columns:
        "native_user_id, resource_id, native_username, identity_type, identity_id, user_email, group_name",
      select: `concat('nul_', toString(i)) AS id, concat('nu_', toString(i)) AS native_user_id, ${base}, username AS native_username,
               ${at(rows.map((l) => l.identityType))} AS identity_type, ${at(rows.map((l) => l.identityId))} AS identity_id,
               if(identity_type = 'user', concat('user', toString(${at(rows.map((l) => l.u))}), '@acme.example'), '') AS user_email,
               if(identity_type = 'group', identity_id, '') AS group_name,
               concat('{"id":"', id, '","nativeUserId":"', native_user_id, '","identityType":"', identity_type, '","identityId":"', identity_id, '"}') AS raw`,
    },
  };
}

/**
 * A year of policy suspensions as the simulator makes them (SUSPENSIONS), on the org's people
 * (as the sessions name them, `usr_<u>`) and teams (by the name the sessions' groups carry, so
 * that the reports' join on them finds sessions), each naming one of its resources; a version
 * for each, a second for an extended one. The simulator lists a suspension until `listedMs` after
 * its slot (SUSPENSION_MODEL), so the exporter records it removed at the first read after that:
 * the year holds that removal, as it holds an indefinite suspension's end.
 */
async function generateSuspensions(w: Warehouse): Promise<void> {
  const d = enterpriseDimensions();
  const teams = [...new Set(d.accounts.flatMap((a) => a.groups))].sort();
  const names = d.resources.map((r) => `'${r.name}'`).join(",");
  const S = SUSPENSIONS;
  const count = Math.floor((365 * DAY) / S.spacingMs);
  await command(
    w,
    `INSERT INTO bench.policy_suspensions (id, policy_id, org_id, identity_type, identity_id, created_by, request_id, suspension_type, input_condition, expire_at, created_at, updated_at, content_hash, observed_at, raw)
     SELECT id, policy_id, 'org_bench', identity_type, identity_id, created_by, request_id, suspension_type, input_condition,
            if(indefinite, NULL, expire_at), created_at, updated_at, hex(cityHash64(k, v)), updated_at,
            concat('{"id":"', id, '","policyId":"', policy_id, '","identityType":"', identity_type, '","identityId":"', identity_id, '","suspensionType":"', suspension_type, '"}')
     FROM (
       SELECT intDiv(number, 2) AS k, number % 2 AS v,
              concat('sus_', toString(k)) AS id, concat('pol_', toString(cityHash64(k, 31) % ${S.policies})) AS policy_id,
              if(cityHash64(k, 32) % 100 < ${S.groupPercent}, 'group', 'user') AS identity_type,
              if(identity_type = 'group', arrayElement([${teams.map((t) => `'${t}'`).join(",")}], 1 + cityHash64(k, 33) % ${teams.length}),
                 concat('usr_', toString(cityHash64(k, 33) % ${ENTERPRISE_ORG.humans}))) AS identity_id,
              concat('user', toString(cityHash64(k, 34) % ${ENTERPRISE_ORG.humans}), '@acme.example') AS created_by,
              concat('req_', toString(k)) AS request_id,
              cityHash64(k, 35) % 100 < ${S.indefinitePercent} AS indefinite,
              if(indefinite, 'indefinite', 'temporary') AS suspension_type,
              concat('resource.name == "', arrayElement([${names}], 1 + cityHash64(k, 36) % ${d.resources.length}), '"') AS input_condition,
              fromUnixTimestamp64Milli(toInt64(${START_MS} + k * ${S.spacingMs} + cityHash64(k, 37) % ${S.spacingMs})) AS created_at,
              toInt64(${HOUR} * (1 + cityHash64(k, 38) % ${S.maxHours})) AS duration,
              NOT indefinite AND cityHash64(k, 39) % 100 < ${S.extendPercent} AS extended,
              if(v = 0, created_at, created_at + toIntervalMillisecond(intDiv(duration, 2))) AS updated_at,
              created_at + toIntervalMillisecond(duration * (1 + v)) AS expire_at
       FROM numbers(${count * 2}))
     WHERE v = 0 OR (extended AND updated_at <= fromUnixTimestamp64Milli(${END_MS}))`,
  );
  await command(
    w,
    `INSERT INTO bench.policy_suspension_removals (id, removed_at, returned_at, observed_at)
     SELECT concat('sus_', toString(number)) AS id,
            fromUnixTimestamp64Milli(toInt64(${START_MS} + (number + ${UNLISTED_AFTER_SLOTS}) * ${S.spacingMs})) AS removed_at,
            NULL, removed_at
     FROM numbers(${count})
     WHERE removed_at <= fromUnixTimestamp64Milli(${END_MS})`,
  );
}

/** Generates everything, rolls the sessions up as the product does, merges as a server would. */
async function load(
  w: Warehouse,
  config: Config,
  sessions: number,
): Promise<void> {
  await generateSessions(
    w,
    sessions,
    ENTERPRISE,
    undefined,
    SCALE_WINDOW === undefined
      ? undefined
      : { fromMs: SCALE_WINDOW.fromMs, toMs: SCALE_WINDOW.toMs },
    SCALE_SHAPE,
  );
  await generateAggregations(
    w,
    SCALE_SHAPE === "org" ? enterpriseDimensions().resources : undefined,
  );
  await generateDirectory(w, SCALE_SHAPE);
  if (SCALE_SHAPE === "org") await generateSuspensions(w);
  await rollUp(
    { config, warehouse: w, logger: createLogger({ level: "silent" }) },
    END_MS,
  );
  await mergeEveryTable(w, false);
}

/**
 * Every table of the year merged to one part a partition, as the dashboards would find it after
 * the engine's background merges: after the load, and on a kept year after the migrations and
 * rollups it lacked filled their tables (`skipMerged`: partitions already one merged part are left alone).
 */
async function mergeEveryTable(
  w: Warehouse,
  skipMerged: boolean,
): Promise<void> {
  const tables = await rows<{ table: string }>(
    w,
    "SELECT DISTINCT table FROM system.parts WHERE database = 'bench' AND active",
  );
  const settings = skipMerged
    ? " SETTINGS optimize_skip_merged_partitions = 1"
    : "";
  for (const { table } of tables)
    await command(w, `OPTIMIZE TABLE bench.\`${table}\` FINAL${settings}`);
}

const RUNS = Number(process.env.BENCH_SCALE_RUNS ?? 5);

/**
 * BENCH_SCALE_QUERY_CAP: seconds after which the engine stops a dashboard query (default 120):
 * it is printed as over the cap, and not run again.
 */
export const QUERY_CAP_SECONDS = Number(
  process.env.BENCH_SCALE_QUERY_CAP ?? 120,
);

/** The chosen user and resource: the busiest pair of the last day (what someone would look at). */
interface Chosen {
  user: string;
  resource: string;
}

/** Every variable and panel of every dashboard for one range and one choice of filters. */
async function dashboardsAt(
  w: Warehouse,
  range: TimeRange,
  rangeName: string,
  chosen: Chosen | undefined,
): Promise<ScaleLatency[]> {
  const out: ScaleLatency[] = [];
  const filter = chosen === undefined ? "all" : "one user and resource";
  const picks = new Map<string, string[]>(
    chosen
      ? [
          ["user", [chosen.user]],
          ["resource", [chosen.resource]],
        ]
      : [],
  );
  for (const { dashboard } of loadDashboards()) {
    const note = (
      query: string,
      m: Pick<ScaleLatency, "p50" | "p95" | "rows" | "stopped">,
    ) => {
      out.push({
        dashboard: dashboard.title,
        query,
        range: rangeName,
        filter,
        ...m,
      });
      // As it goes, so that a run stopped early still says what it measured.
      process.stderr.write(
        `bench: scale, ${dashboard.title} / ${query} / ${rangeName} / ${filter}: ${m.stopped ? `stopped (${m.stopped})` : `p50 ${Math.round(m.p50)} ms, p95 ${Math.round(m.p95)} ms, ${m.rows} rows`}\n`,
      );
    };
    const { variables } = await resolveVariables(w, dashboard, {
      range,
      chosen: picks,
    });
    // Each variable's query as Grafana sends it: with the variables before it.
    for (const [i, v] of dashboard.templating.list.entries())
      if (v.type === "query")
        note(
          `variable ${v.name}`,
          await measureOrSay(
            w,
            renderQuery(v.query, {
              range,
              intervalMs: queryInterval(range),
              variables: variables.filter((x) =>
                dashboard.templating.list
                  .slice(0, i)
                  .some((before) => before.name === x.name),
              ),
            }),
          ),
        );
    for (const panel of dashboard.panels)
      for (const sql of panelSql(panel, range, variables))
        note(panel.title, await measureOrSay(w, sql));
  }
  return out;
}

/**
 * A query measured with the cap; one the engine refuses is said, and marked `stopped: "error"`,
 * so that one query does not end the run.
 */
async function measureOrSay(
  w: Warehouse,
  sql: string,
): Promise<Pick<ScaleLatency, "p50" | "p95" | "rows" | "stopped">> {
  try {
    return await measure(w, sql, RUNS, QUERY_CAP_SECONDS);
  } catch (err) {
    process.stderr.write(
      `bench: scale, a query failed: ${(err as Error).message.slice(0, 300)}\n${sql.slice(0, 300)}\n`,
    );
    return { p50: 0, p95: 0, rows: 0, stopped: "error" };
  }
}

/** The tables' rows and disk, and the sessions table's columns, largest first. */
async function disk(
  w: Warehouse,
): Promise<Pick<ScaleBench, "tables" | "sessionColumns">> {
  const tables = (
    await rows<{ table: string; rows: string; bytes: string }>(
      w,
      `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
       WHERE database = 'bench' AND active GROUP BY table ORDER BY bytes DESC`,
    )
  ).map((t) => ({
    table: t.table,
    rows: Number(t.rows),
    bytes: Number(t.bytes),
  }));
  const sessionColumns = (
    await rows<{ column: string; bytes: string; uncompressed: string }>(
      w,
      `SELECT name AS column, data_compressed_bytes AS bytes, data_uncompressed_bytes AS uncompressed
       FROM system.columns WHERE database = 'bench' AND table = 'sessions' ORDER BY data_compressed_bytes DESC`,
    )
  ).map((c) => ({
    column: c.column,
    bytes: Number(c.bytes),
    uncompressed: Number(c.uncompressed),
  }));
  return { tables, sessionColumns };
}

/**
 * Every dashboard over the last 24 h, 30 d and 365 d, at All and for the busiest pair; only the
 * ranges whose sessions are all loaded.
 */
async function allDashboards(w: Warehouse): Promise<ScaleLatency[]> {
  const [busiest] = await rows<Chosen>(
    w,
    `SELECT user_key AS user, resource_name AS resource FROM bench.sessions
     WHERE start_time >= fromUnixTimestamp64Milli(${END_MS - DAY}) GROUP BY user, resource ORDER BY count() DESC LIMIT 1`,
  );
  const latencies: ScaleLatency[] = [];
  for (const [name, days] of SCALE_RANGES) {
    if (!rangeLoaded(days) || !rangeAsked(name)) continue;
    const range = { fromMs: END_MS - days * DAY, toMs: END_MS };
    latencies.push(...(await dashboardsAt(w, range, name, undefined)));
    latencies.push(...(await dashboardsAt(w, range, name, busiest)));
    process.stderr.write(`bench: scale, dashboards over ${name} measured\n`);
  }
  return latencies;
}

/**
 * The scale scenario in `dataDir`: loaded there (unless `reuse`, a directory an earlier run
 * loaded and kept), then measured as BENCH_SCALE_PARTS says.
 */
export async function runScale(
  dataDir: string,
  sessions: number,
  reuse = false,
): Promise<ScaleBench> {
  let sample: ScaleSample | undefined;
  if (!reuse && scalePartAsked("sample")) {
    sample = await sampleDay(dataDir, sessions);
    process.stderr.write(
      `bench: scale, sample day ${sample.day} checked: ${sample.differences.length === 0 ? "tables equal a sync" : `${sample.differences.length} differences`}\n`,
    );
  }
  const none = { month: SCALE_MONTH, monthSessions: 0, directMs: NaN };
  // BENCH_SCALE_SAMPLE_ONLY=1: the sample day's check alone.
  if (process.env.BENCH_SCALE_SAMPLE_ONLY === "1")
    return {
      sessions,
      loadMs: NaN,
      loadCpuMs: NaN,
      tables: [],
      sessionColumns: [],
      latencies: [],
      ...(sample ? { sample } : {}),
      ...none,
    };
  const { w, config } = await openBench(dataDir, { keep: true });
  const started = performance.now();
  const cpu = process.cpuUsage();
  if (!reuse) await load(w, config, sessions);
  else {
    // A rollup a migration added since the year was kept is computed as the product's rollups
    // job would (the other rollups' days did not change, and are left as they are).
    await rollUp(
      { config, warehouse: w, logger: createLogger({ level: "silent" }) },
      END_MS,
    );
    await mergeEveryTable(w, true);
  }
  const loadMs = reuse ? NaN : performance.now() - started;
  const { user, system } = process.cpuUsage(cpu);
  const loaded = {
    sessions,
    loadMs,
    loadCpuMs: reuse ? NaN : (user + system) / 1000,
    ...(await disk(w)),
    ...(sample ? { sample } : {}),
  };
  // BENCH_SCALE_LOAD_ONLY=1: the load and the disk it takes, nothing measured on it.
  if (process.env.BENCH_SCALE_LOAD_ONLY === "1") {
    await w.close();
    return { ...loaded, latencies: [], ...none };
  }
  await command(w, "USE bench");
  const latencies = scalePartAsked("dashboards") ? await allDashboards(w) : [];
  const { from, to } = monthBounds(SCALE_MONTH);
  const [month] = await rows<{ n: string }>(
    w,
    `SELECT count() AS n FROM bench.sessions FINAL WHERE start_time >= '${from}' AND start_time < '${to}'`,
  );
  const directMs =
    scalePartAsked("archive") && MONTH_PARTS_SKIPPED === undefined
      ? await directParquet(w, dataDir)
      : NaN;
  await w.close();
  const monthSessions = Number(month?.n ?? 0);
  return { ...loaded, latencies, month: SCALE_MONTH, monthSessions, directMs };
}
