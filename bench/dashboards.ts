// Dashboard latency over long retention: 10 million sessions and a year of log aggregations,
// generated inside ClickHouse with the shapes the exporter writes, then every template variable's
// query (what a dashboard runs when it opens, before its panels) and every panel's query of every
// dashboard (macros and variables expanded as the Grafana plugin does) for a 30-day range.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type Config } from "../src/config/index.js";
import {
  migrate,
  openWarehouse,
  quoteIdent,
  stringList,
  type Warehouse,
} from "../src/warehouse/index.js";
import { TEXTBOX_SAMPLES, loadDashboards } from "../test/helpers/dashboards.js";
import { percentile } from "./harness.js";
import {
  simulatorProfile,
  type SimulatorProfile,
} from "./simulator-profile.js";
import { TRAFFIC_MODEL } from "../src/simulator/index.js";
import {
  AWAY_ADDRESSES,
  EPHEMERAL_ADDRESSES,
  enterpriseDimensions,
  POOL_SLOTS,
  POOL_STRIDE,
  POOLS,
  positionAt,
  startMsSql,
  weekModel,
  type OrgDimensions,
  type Pool,
  type Shape,
  type WeekModel,
} from "./org-scenario.js";
import {
  ALL,
  queryInterval,
  renderQuery,
  type TemplateVariable,
  type TimeRange,
} from "../test/helpers/grafana-sql.js";

const DAY = 86_400_000;
/** The generated year ends here. */
export const END_MS = Date.UTC(2026, 10, 16, 0, 0, 0);
const YEAR_MS = 365 * DAY;
const TECHNOLOGIES = [
  "postgres",
  "mysql",
  "snowflake",
  "s3",
  "kubernetes",
  "ssh",
  "http",
  "llm",
  "mcp",
  "mongodb",
  "redis",
  "bigquery",
  "clickhouse",
  "mariadb",
  "mssqlserver",
  "kafka",
  "elastic",
  "dynamodb",
  "athena",
  "grpc",
  "rdp",
  "web",
];

export interface VariableLatency {
  dashboard: string;
  variable: string;
  p50: number;
  p95: number;
  rows: number;
}

export interface PanelLatency {
  dashboard: string;
  panel: string;
  p50: number;
  p95: number;
  rows: number;
}

/**
 * A migrated database (`bench` unless named) in `dataDir`, and its configuration. The directory
 * is emptied first unless `keep` (another database of this process's engine is in it); `env`
 * adds settings (the API a sync reads).
 */
export async function openBench(
  dataDir: string,
  o: { database?: string; keep?: boolean; env?: Record<string, string> } = {},
): Promise<{ w: Warehouse; config: Config }> {
  if (o.keep !== true) rmSync(dataDir, { recursive: true, force: true });
  const config = loadConfig({
    env: {
      SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: "unused-key",
      SESSIONHOUSE_DATA_DIR: dataDir,
      CLICKHOUSE_DATABASE: o.database ?? "bench",
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...o.env,
    },
  });
  const w = await openWarehouse(config);
  await migrate(w, {
    dir: join(process.env.SESSIONHOUSE_REPO_ROOT ?? ".", "migrations"),
  });
  return { w, config };
}

async function command(w: Warehouse, sql: string): Promise<void> {
  await w.client.command({
    query: sql,
    clickhouse_settings: { max_execution_time: 3600 },
  });
}

/** Share of sessions that reach the exporter late (the simulator's `lateSession` fault). */
export const LATE_SHARE = 1 / 997;
/** How long after its start a late session is first read: the simulator's default `lateMs`. */
export const LATE_AFTER_MS = 3 * 3_600_000;

const techArray = `[${TECHNOLOGIES.map((t) => `'${t}'`).join(",")}]`;

const SESSION_COLUMNS =
  "id, start_time, end_time, duration_ms, session_status, client_ip_address, server_ip_address, sidecar_id, sidecar_name, sidecar_technology, user_type, user_username, user_id, user_name, user_email, user_account_type, user_groups, user_external_ids, end_user_id, end_user_name, end_user_email, end_user_type, end_user_groups, end_user_external_ids, native_username, resource_type, resource_id, resource_name, resource_technology, connector_id, connector_name, parent_session_id, raw, fetched_at, version";

/** Who and what the generated sessions name: people first, then machine accounts. */
export interface Population {
  /** Accounts (user ids 0 … users - 1). */
  users: number;
  /** The first `humans` accounts are people; the others machines. */
  humans: number;
  resources: number;
  /** Favourite resources of each account (a few dozen, as in the simulator). */
  favourites: number;
}

/** The 10M dashboards bench's population. */
const SMALL: Population = {
  users: 460,
  humans: 400,
  resources: 150,
  favourites: 20,
};

/** A range of start times: only the sessions of a scenario that start in it. */
export interface StartRange {
  fromMs: number;
  toMs: number;
}

/**
 * The session numbers (`numbers()` rows) whose start may fall in `only`, with a margin of two
 * on each side for the engine's floating-point start times; the SQL filter decides exactly.
 */
function numberRange(
  total: number,
  spanMs: number,
  only: StartRange | undefined,
): { first: number; end: number } {
  if (only === undefined) return { first: 0, end: total };
  const stepMs = spanMs / total;
  const startMs = END_MS - spanMs;
  const first = Math.max(0, Math.floor((only.fromMs - startMs) / stepMs) - 2);
  const end = Math.min(total, Math.ceil((only.toMs - startMs) / stepMs) + 2);
  return { first, end: Math.max(first, end) };
}

/**
 * `total` sessions over the `spanMs` (default a year) before END_MS, into the database of `w`,
 * in one of two shapes. `uniform`: population `p`'s accounts reach their favourite resources at
 * random, spread evenly in time (every daily key about one session at scale: the adversarial
 * case for the rollups). `org`: the simulator's organisation at the enterprise's size
 * (bench/org-scenario.ts; `p` unused), its office hours and nightly batches. Each session is a
 * function of its number alone, so `only` (a range of start times, such as one day) writes
 * exactly the rows the whole scenario writes for that range, and only those.
 */
export async function generateSessions(
  w: Warehouse,
  total: number,
  p: Population = SMALL,
  spanMs = YEAR_MS,
  only?: StartRange,
  shape: Shape = "uniform",
): Promise<void> {
  if (shape === "org") await generateOrg(w, total, spanMs, only);
  else await generateUniform(w, total, p, spanMs, only);
}

/**
 * The select-list items after the identity and resource columns: the record as the API sends
 * it, when it was read, and its version. Both shapes' sessions share them.
 */
function recordAndRead(lateMillionths: number): string {
  return `         -- The record as the API sends it (src/simulator/wire.ts): zero values left out.
         concat('{"id":"', id, '","startTime":"', formatDateTime(start_time, '%Y-%m-%dT%H:%i:%S.%fZ'), '"',
                if(end_time IS NULL, '', concat(',"endTime":"', formatDateTime(assumeNotNull(end_time), '%Y-%m-%dT%H:%i:%S.%fZ'),
                  '","duration":"', toString(intDiv(duration, 1000)), '.', leftPad(toString(duration % 1000), 3, '0'), 's"')),
                ',"sessionStatus":"', session_status,
                '","network":{"clientIpAddress":"', client_ip_address, '","serverIpAddress":"', server_ip_address,
                '"},"sidecar":{"id":"', sidecar_id, '","name":"', sidecar_name, '","technology":"', technology,
                '"},"user":{"type":"', user_type, '","username":"', user_username, '","native":{"username":"', native_username,
                '"},"formal":{"user":{"id":"', user_id, '","name":"', user_name, '"', if(user_email = '', '', concat(',"email":"', user_email, '"')),
                ',"type":"', user_account_type, '","groups":', toJSONString(user_groups), ',"externalIds":', toJSONString(user_external_ids), '}',
                if(end_user_id = '', '', concat(',"endUser":{"id":"', end_user_id, '","name":"', end_user_name, '","email":"', end_user_email,
                  '","type":"', end_user_type, '","groups":', toJSONString(end_user_groups), '}')),
                '}},"resource":{"type":"', resource_type, '","id":"', resource_id, '","name":"', resource_name, '","technology":"', technology, '"}',
                if(connector_id = '', '', concat(',"connector":{"id":"', connector_id, '","name":"', connector_name, '"}')),
                if(parent_session_id = '', '', concat(',"parentSessionId":"', parent_session_id, '"')), '}') AS raw,
         -- Read a minute after its start (at the latest at the end); a late session (LATE_SHARE)
         -- LATE_AFTER_MS after it, so one whose first read is after the end is not there yet.
         cityHash64(number, 8) % 1000000 < ${lateMillionths} AS late,
         start_time + toIntervalMillisecond(if(late, ${LATE_AFTER_MS}, 60000)) AS first_read,
         least(first_read, fromUnixTimestamp64Milli(${END_MS})) AS fetched_at,
         toUInt64(if(session_status = 'completed', 2, 1) * 4398046511104 + toUnixTimestamp64Milli(fetched_at)) AS version`;
}

/** The uniform shape (see generateSessions): `total` sessions spread evenly over `spanMs`. */
async function generateUniform(
  w: Warehouse,
  total: number,
  p: Population,
  spanMs: number,
  only: StartRange | undefined,
): Promise<void> {
  const stepMs = spanMs / total;
  // Machine accounts used on a person's behalf: the last third of the machines.
  const endUserFrom = p.users - Math.round((p.users - p.humans) / 3);
  const chunk = 1_000_000;
  const { first, end } = numberRange(total, spanMs, only);
  const within =
    only === undefined
      ? ""
      : `AND start_time >= fromUnixTimestamp64Milli(${only.fromMs}) AND start_time < fromUnixTimestamp64Milli(${only.toMs})`;
  const lateMillionths = Math.round(LATE_SHARE * 1e6);
  const sim = simulatorProfile(END_MS);
  const RECORD_AND_READ = recordAndRead(lateMillionths);
  const technologies = `[${sim.technologies.map((t) => `'${t}'`).join(",")}]`;
  // Children come in groups of four numbers: the first is the parent, 1–3 after it its children
  // in a group that has any (mean 2), so a share c of children needs 2c of the groups.
  const spawnPer10000 = Math.round(2 * sim.childShare * 10_000);
  for (let offset = first; offset < end; offset += chunk) {
    const n = Math.min(chunk, end - offset);
    await command(
      w,
      // By column name: later migrations add columns (legal_hold) the generator leaves to their default.
      `INSERT INTO ${quoteIdent(w.database)}.sessions (${SESSION_COLUMNS})
       SELECT ${SESSION_COLUMNS} FROM (SELECT
         concat('ses_', leftPad(hex(number), 12, '0')) AS id,
         fromUnixTimestamp64Milli(toInt64(${END_MS - spanMs} + number * ${stepMs})) AS start_time,
         -- Open (active or idle, as the simulator's 80/20) while it runs past the scenario's end.
         start_time + toIntervalMillisecond(duration) > fromUnixTimestamp64Milli(${END_MS}) AS open,
         if(open, NULL, start_time + toIntervalMillisecond(duration)) AS end_time,
         if(open, NULL, duration) AS duration_ms,
         if(open, if(cityHash64(number, 5) % 10 < 8, 'active', 'idle'), 'completed') AS session_status,
         concat('10.', toString(u % 200), '.', toString(u % 50), '.', toString(cityHash64(number, 4) % 40)) AS client_ip_address,
         concat('172.', toString(16 + intDiv(r, 256)), '.', toString(r % 256), '.10') AS server_ip_address,
         concat('sdc_', toString(r % 12)) AS sidecar_id,
         concat('sidecar-', toString(r % 12)) AS sidecar_name,
         technology AS sidecar_technology,
         if(u < ${p.humans}, 'human', 'machine') AS user_type,
         concat('user', toString(u)) AS user_username,
         concat('usr_', toString(u)) AS user_id,
         concat('User ', toString(u)) AS user_name,
         if(u < ${p.humans}, concat('user', toString(u), '@acme.example'), '') AS user_email,
         if(u < ${p.humans}, 'human', 'machine') AS user_account_type,
         [concat('group-', toString(u % 25)), concat('group-', toString((u + 7) % 25))] AS user_groups,
         [concat('okta|', toString(u))] AS user_external_ids,
         if(u >= ${endUserFrom}, concat('usr_', toString(base % ${p.humans})), '') AS end_user_id,
         if(u >= ${endUserFrom}, concat('User ', toString(base % ${p.humans})), '') AS end_user_name,
         if(u >= ${endUserFrom}, concat('user', toString(base % ${p.humans}), '@acme.example'), '') AS end_user_email,
         if(u >= ${endUserFrom}, 'human', '') AS end_user_type,
         if(u >= ${endUserFrom}, [concat('group-', toString(base % 25))], []) AS end_user_groups,
         [] AS end_user_external_ids,
         arrayElement(['analyst', 'app_readonly', 'postgres'], 1 + number % 3) AS native_username,
         arrayElement(['datastore', 'aws', 'instance'], 1 + r % 3) AS resource_type,
         concat('res_', toString(r)) AS resource_id,
         concat('resource-', toString(r), '-', arrayElement(['prod', 'staging', 'dev', 'sandbox'], 1 + r % 4)) AS resource_name,
         technology AS resource_technology,
         if(r % 3 = 0, concat('con_', toString(r % 4)), '') AS connector_id,
         if(r % 3 = 0, concat('connector-', toString(r % 4)), '') AS connector_name,
         if(is_child, concat('ses_', leftPad(hex(base), 12, '0')), '') AS parent_session_id,
${RECORD_AND_READ}
       FROM (
         SELECT number, base, is_child, u, r, duration,
                -- A resource's technology, with the simulator's share of sessions: resource r at
                -- r × the golden ratio (mod 1), a sequence that fills the shares evenly.
                arrayElement(${technologies}, arrayFirstIndex(x -> x > toUInt32(10000 * (r * 0.6180339887 - floor(r * 0.6180339887))), [${sim.cumulative.join(",")}])) AS technology
         FROM (
         -- As in the simulator: each person works with a few dozen favourite resources, from
         -- a few addresses; a child session is its parent's user's, on a resource of theirs.
         SELECT number, intDiv(number, 4) AS g, number % 4 AS slot,
                cityHash64(g, 6) % 10000 < ${spawnPer10000} AND slot >= 1 AND slot <= 1 + cityHash64(g, 7) % 3 AS is_child,
                if(is_child, g * 4, number) AS base,
                cityHash64(base, 1) % ${p.users} AS u, (u * 7 + cityHash64(number, 2) % ${p.favourites}) % ${p.resources} AS r,
                -- The simulator's durations (its quantiles).
                toUInt64(arrayElement([${sim.durationsMs.join(",")}], 1 + cityHash64(number, 3) % 1000)) AS duration
         FROM numbers(${offset}, ${n})
         )
       )
       WHERE (NOT late OR first_read <= fromUnixTimestamp64Milli(${END_MS})) ${within})`,
    );
  }
}

/** The organisation's dimension tables, in the database the sessions are generated into. */
const ORG_TABLES = {
  accounts:
    "u UInt32, human UInt8, pool UInt8, groups Array(String), favs Array(UInt32), cum Array(Float64), home String",
  slot_ranges: "pool UInt8, lo UInt32, hi UInt32, u UInt32",
  picks: "key UInt64, u UInt32",
  resources:
    "r UInt32, name String, environment String, technology String, rtype String, natives Array(String), server_ip String, sidecar UInt32, sidecar_name String, connector Int32, connector_name String",
} as const;

const orgTable = (w: Warehouse, t: keyof typeof ORG_TABLES) =>
  `${quoteIdent(w.database)}.${quoteIdent(`scenario_${t}`)}`;

/** Loads the organisation's dimensions (bench/org-scenario.ts) into small tables of `w`. */
async function loadOrgTables(w: Warehouse, d: OrgDimensions): Promise<void> {
  for (const [t, columns] of Object.entries(ORG_TABLES)) {
    const table = orgTable(w, t as keyof typeof ORG_TABLES);
    await command(w, `DROP TABLE IF EXISTS ${table}`);
    await command(w, `CREATE TABLE ${table} (${columns}) ENGINE = Memory`);
  }
  const insert = async (t: keyof typeof ORG_TABLES, values: object[]) => {
    for (let i = 0; i < values.length; i += 10_000)
      await w.client.insert({
        table: orgTable(w, t),
        values: values.slice(i, i + 10_000),
        format: "JSONEachRow",
      });
  };
  await insert(
    "accounts",
    d.accounts.map((a) => ({ ...a, pool: POOLS.indexOf(a.pool) })),
  );
  await insert("slot_ranges", d.slots);
  await insert("resources", d.resources);
  await command(
    w,
    `INSERT INTO ${orgTable(w, "picks")} SELECT pool * ${POOL_STRIDE} + arrayJoin(range(lo, hi)), u FROM ${orgTable(w, "slot_ranges")}`,
  );
}

async function dropOrgTables(w: Warehouse): Promise<void> {
  for (const t of Object.keys(ORG_TABLES))
    await command(
      w,
      `DROP TABLE IF EXISTS ${orgTable(w, t as keyof typeof ORG_TABLES)}`,
    );
}

/**
 * Session number → who and when (the first step of the org shape): its start by the week's
 * traffic, a person's or a machine's by the hour's share, a machine's kind by the simulator's
 * weights, 8 % of a person's activity through a BI tool on their behalf; `key` draws the
 * account's slot, `ekey` the person a BI session is for.
 */
function orgDraws(
  offset: number,
  n: number,
  m: WeekModel,
  o: { startMs: number; spanMs: number; total: number },
  sim: SimulatorProfile,
): string {
  const spawnPer10000 = Math.round(2 * sim.childShare * 10_000);
  const kinds = Object.entries(TRAFFIC_MODEL.machineKindWeights);
  const kindTotal = kinds.reduce((a, [, v]) => a + v, 0);
  let sum = 0;
  const kindCum = kinds.map(([, v]) =>
    Math.round(((sum += v) / kindTotal) * 10_000),
  );
  const kindPool = kinds.map(([k]) => POOLS.indexOf(k as Pool));
  const slots = POOLS.map((p) => POOL_SLOTS[p]);
  const humanShare = m.humanShare.map((x) => Math.round(x * 1e6));
  return `SELECT number, intDiv(number, 4) AS g, number % 4 AS slot,
      cityHash64(g, 6) % 10000 < ${spawnPer10000} AND slot >= 1 AND slot <= 1 + cityHash64(g, 7) % 3 AS is_child,
      if(is_child, g * 4, number) AS base,
      ${startMsSql("number", "n", m, o)},
      ${startMsSql("base", "b", m, o)},
      cityHash64(base, 11) % 1000000 < arrayElement([${humanShare.join(",")}], b_h + 1) AS person,
      person AND cityHash64(base, 12) % 10000 < ${Math.round(TRAFFIC_MODEL.biShare * 10_000)} AS is_bi,
      if(person, if(is_bi, ${POOLS.indexOf("bi")}, 0),
         arrayElement([${kindPool.join(",")}], arrayFirstIndex(c -> c > cityHash64(base, 13) % 10000, [${kindCum.join(",")}]))) AS pool,
      pool * ${POOL_STRIDE} + cityHash64(base, 14) % arrayElement([${slots.join(",")}], pool + 1) AS key,
      cityHash64(base, 15) % ${POOL_SLOTS.human} AS ekey,
      toUInt64(arrayElement([${sim.durationsMs.join(",")}], 1 + cityHash64(number, 3) % 1000)) AS duration
    FROM numbers(${offset}, ${n})`;
}

/**
 * The org shape's rows before the record: the account and its end user joined, the resource
 * drawn from the account's favourites (a tenth of the time any resource), the client address
 * (a person's home most of the time, else a VPN address; a batch host's or BI tool's fixed one;
 * CI runners, app pods and agents from their ranges); a child from its parent's address, or
 * from the parent's resource when that is a host it hopped from (SSH, Kubernetes).
 */
function orgRows(draws: string, w: Warehouse, resources: number): string {
  const u01 = (salt: number, x: string) =>
    `(cityHash64(${x}, ${salt}) / 18446744073709551616.0)`;
  const wander = Math.round(TRAFFIC_MODEL.wanderShare * 1000);
  const draw = (x: string) =>
    `if(empty(a.favs) OR cityHash64(${x}, 18) % 1000 < ${wander}, toUInt32(cityHash64(${x}, 19) % ${resources}),
        arrayElement(a.favs, arrayFirstIndex(c -> c > ${u01(20, x)}, a.cum)))`;
  const host = (a: { prefix: string; thirdOctets: number }) =>
    `concat('${a.prefix}', toString(cityHash64(s.base, 21) % ${a.thirdOctets}), '.', toString(2 + cityHash64(s.base, 22) % 253))`;
  const e = EPHEMERAL_ADDRESSES;
  const home = Math.round(TRAFFIC_MODEL.homeAddressShare * 100);
  const pool = (p: Pool) => POOLS.indexOf(p);
  const joined = `SELECT s.*, p.u AS u, pe.u AS eu, a.human AS human, a.groups AS groups, e.groups AS e_groups,
      ${draw("s.number")} AS rid, ${draw("s.base")} AS prid,
      multiIf(s.pool = ${pool("human")}, if(cityHash64(s.base, 17) % 100 < ${home}, a.home, ${host(AWAY_ADDRESSES)}),
              s.pool = ${pool("ci")}, ${host(e.ci)},
              s.pool = ${pool("app")}, ${host(e.app)},
              s.pool = ${pool("agent")}, ${host(e.agent)},
              a.home) AS cip
    FROM (${draws}) AS s
    INNER JOIN ${orgTable(w, "picks")} AS p ON p.key = s.key
    INNER JOIN ${orgTable(w, "picks")} AS pe ON pe.key = s.ekey
    INNER JOIN ${orgTable(w, "accounts")} AS a ON a.u = p.u
    INNER JOIN ${orgTable(w, "accounts")} AS e ON e.u = pe.u`;
  return `SELECT j.*, res.name AS rname, res.technology AS technology, res.rtype AS rtype, res.server_ip AS server_ip,
      res.sidecar AS sidecar, res.sidecar_name AS sidecar_name, res.connector AS connector, res.connector_name AS connector_name,
      -- The simulator's native users: the first ones are the everyday ones, superusers rare.
      if(empty(res.natives), '', arrayElement(res.natives, 1 + toUInt32(least(toFloat64(length(res.natives) - 1), floor(pow(${u01(16, "j.number")}, 2) * length(res.natives)))))) AS native,
      if(j.is_child AND pres.technology IN ('ssh', 'kubernetes'), pres.server_ip, j.cip) AS client_ip
    FROM (${joined}) AS j
    INNER JOIN ${orgTable(w, "resources")} AS res ON res.r = j.rid
    INNER JOIN ${orgTable(w, "resources")} AS pres ON pres.r = j.prid`;
}

/** The org shape's sessions as the table's columns (the identity columns as the uniform shape's). */
function orgSessionsSql(rows: string, lateMillionths: number): string {
  return `SELECT
     concat('ses_', leftPad(hex(number), 12, '0')) AS id,
     fromUnixTimestamp64Milli(toInt64(n_ms)) AS start_time,
     start_time + toIntervalMillisecond(duration) > fromUnixTimestamp64Milli(${END_MS}) AS open,
     if(open, NULL, start_time + toIntervalMillisecond(duration)) AS end_time,
     if(open, NULL, duration) AS duration_ms,
     if(open, if(cityHash64(number, 5) % 10 < 8, 'active', 'idle'), 'completed') AS session_status,
     client_ip AS client_ip_address,
     server_ip AS server_ip_address,
     concat('sdc_', toString(sidecar)) AS sidecar_id,
     sidecar_name,
     technology AS sidecar_technology,
     if(human = 1, 'human', 'machine') AS user_type,
     concat('user', toString(u)) AS user_username,
     concat('usr_', toString(u)) AS user_id,
     concat('User ', toString(u)) AS user_name,
     if(human = 1, concat('user', toString(u), '@acme.example'), '') AS user_email,
     user_type AS user_account_type,
     groups AS user_groups,
     [concat('okta|', toString(u))] AS user_external_ids,
     if(is_bi, concat('usr_', toString(eu)), '') AS end_user_id,
     if(is_bi, concat('User ', toString(eu)), '') AS end_user_name,
     if(is_bi, concat('user', toString(eu), '@acme.example'), '') AS end_user_email,
     if(is_bi, 'human', '') AS end_user_type,
     if(is_bi, e_groups, []) AS end_user_groups,
     [] AS end_user_external_ids,
     native AS native_username,
     rtype AS resource_type,
     concat('res_', toString(rid)) AS resource_id,
     rname AS resource_name,
     technology AS resource_technology,
     if(connector < 0, '', concat('con_', toString(connector))) AS connector_id,
     connector_name,
     if(is_child, concat('ses_', leftPad(hex(base), 12, '0')), '') AS parent_session_id,
${recordAndRead(lateMillionths)}
   FROM (${rows})`;
}

/** The org shape (see generateSessions). */
async function generateOrg(
  w: Warehouse,
  total: number,
  spanMs: number,
  only: StartRange | undefined,
): Promise<void> {
  const dims = enterpriseDimensions();
  const span = { startMs: END_MS - spanMs, spanMs, total };
  const m = weekModel(span.startMs);
  const { first, end } = orgNumberRange(m, span, only);
  const within =
    only === undefined
      ? ""
      : `AND start_time >= fromUnixTimestamp64Milli(${only.fromMs}) AND start_time < fromUnixTimestamp64Milli(${only.toMs})`;
  const sim = simulatorProfile(END_MS);
  await loadOrgTables(w, dims);
  const lateMillionths = Math.round(LATE_SHARE * 1e6);
  const chunk = 1_000_000;
  try {
    for (let offset = first; offset < end; offset += chunk) {
      const n = Math.min(chunk, end - offset);
      const rows = orgRows(
        orgDraws(offset, n, m, span, sim),
        w,
        dims.resources.length,
      );
      await command(
        w,
        `INSERT INTO ${quoteIdent(w.database)}.sessions (${SESSION_COLUMNS})
         SELECT ${SESSION_COLUMNS} FROM (${orgSessionsSql(rows, lateMillionths)})
         WHERE (NOT late OR first_read <= fromUnixTimestamp64Milli(${END_MS})) ${within}`,
      );
    }
  } finally {
    await dropOrgTables(w);
  }
}

/** The org shape's session numbers whose start may fall in `only` (a margin of two each side). */
function orgNumberRange(
  m: WeekModel,
  span: { startMs: number; spanMs: number; total: number },
  only: StartRange | undefined,
): { first: number; end: number } {
  if (only === undefined) return { first: 0, end: span.total };
  const perPosition = span.total / positionAt(m, span.spanMs);
  const at = (ms: number) =>
    positionAt(m, Math.min(span.spanMs, Math.max(0, ms - span.startMs))) *
    perPosition;
  const first = Math.max(0, Math.floor(at(only.fromMs)) - 2);
  const end = Math.min(span.total, Math.ceil(at(only.toMs)) + 2);
  return { first, end: Math.max(first, end) };
}

/**
 * `buckets` buckets of `intervalS` seconds from the year's start, `perBucket` rows each, of job's
 * histogram at `level`: `keys` is the row's six (field, key) values as a tuple of `number`, the
 * row's number.
 */
function histogramRows(
  w: Warehouse,
  job: string,
  level: number,
  intervalS: number,
  buckets: number,
  perBucket: number,
  keys: string,
): Promise<void> {
  const start = (END_MS - YEAR_MS) / 1000;
  return command(
    w,
    `INSERT INTO bench.agg_histogram (job, bucket_time, interval_s, level, field1, key1, field2, key2, field3, key3, count, window_start, fetched_at)
       SELECT '${job}', toDateTime(${start} + intDiv(number, ${perBucket}) * ${intervalS}, 'UTC') AS bucket_time, ${intervalS}, ${level},
              k.1, k.2, k.3, k.4, k.5, k.6, 1 + cityHash64(number) % 40,
              toStartOfHour(bucket_time), bucket_time + toIntervalMinute(10)
       FROM (SELECT number, ${keys} AS k FROM numbers(${buckets * perBucket}))`,
  );
}

/**
 * A year of the default aggregation jobs at their default intervals, as the exporter stores them.
 * With `resources` (the org shape's, by index), `resource_environments` names those resources
 * every hour, each with its environment, so that the sessions on them have one; else 150
 * resources no generated session names.
 */
export async function generateAggregations(
  w: Warehouse,
  resources?: readonly { name: string; environment: string }[],
): Promise<void> {
  const buckets5m = YEAR_MS / 300_000;
  const start = (END_MS - YEAR_MS) / 1000;
  const h = histogramRows.bind(null, w);
  const i = "(number % PER)";
  const key = (per: number, expr: string) =>
    expr.replaceAll("PER", String(per));
  // level 0 of every job
  for (const [job, intervalS, buckets] of [
    ["logs_by_technology", 300, buckets5m],
    ["logs_by_user_resource", 300, buckets5m],
    ["policies_by_name_status", 300, buckets5m],
    ["llm_by_provider_model", 300, buckets5m],
    ["data_labels_by_resource", 300, buckets5m],
    ["resource_environments", 3600, buckets5m / 12],
  ] as const) {
    await h(job, 0, intervalS, buckets, 1, "('', '', '', '', '', '')");
  }
  await h(
    "logs_by_technology",
    1,
    300,
    buckets5m,
    22,
    key(
      22,
      `('resource.technology', arrayElement(${techArray}, 1 + ${i}), '', '', '', '')`,
    ),
  );
  await h(
    "logs_by_user_resource",
    1,
    300,
    buckets5m,
    20,
    key(
      20,
      `('user.email', concat('user', toString(cityHash64(number, 9) % 400), '@acme.example'), '', '', '', '')`,
    ),
  );
  await h(
    "logs_by_user_resource",
    2,
    300,
    buckets5m,
    30,
    key(
      30,
      `('user.email', concat('user', toString(cityHash64(number, 9) % 400), '@acme.example'), 'resource.name', concat('resource-', toString(cityHash64(number, 8) % 150), '-prod'), '', '')`,
    ),
  );
  await h(
    "policies_by_name_status",
    1,
    300,
    buckets5m,
    8,
    key(
      8,
      `('policy.name', concat('policy-', toString(cityHash64(number, 7) % 15)), '', '', '', '')`,
    ),
  );
  await h(
    "policies_by_name_status",
    2,
    300,
    buckets5m,
    10,
    key(
      10,
      `('policy.name', concat('policy-', toString(cityHash64(number, 7) % 15)), 'policy.status', arrayElement(['active', 'dry-run', 'draft'], 1 + ${i} % 3), '', '')`,
    ),
  );
  await h(
    "llm_by_provider_model",
    1,
    300,
    buckets5m,
    5,
    key(
      5,
      `('llm.provider', arrayElement(['openai', 'anthropic', 'google', 'aws-bedrock', 'azure-openai'], 1 + ${i}), '', '', '', '')`,
    ),
  );
  await h(
    "llm_by_provider_model",
    2,
    300,
    buckets5m,
    8,
    key(
      8,
      `('llm.provider', arrayElement(['openai', 'anthropic', 'google', 'aws-bedrock', 'azure-openai'], 1 + ${i} % 5), 'llm.model', concat('model-', toString(${i})), '', '')`,
    ),
  );
  await h(
    "data_labels_by_resource",
    1,
    300,
    buckets5m,
    9,
    key(
      9,
      `('response.returned_columns.data_label', arrayElement(['email', 'phone', 'ssn', 'credit_card', 'name', 'address', 'iban', 'ip_address', 'none'], 1 + ${i}), '', '', '', '')`,
    ),
  );
  await h(
    "data_labels_by_resource",
    2,
    300,
    buckets5m,
    20,
    key(
      20,
      `('response.returned_columns.data_label', arrayElement(['email', 'phone', 'ssn', 'credit_card', 'name', 'address', 'iban', 'ip_address', 'none'], 1 + ${i} % 9), 'resource.name', concat('resource-', toString(cityHash64(number, 5) % 150), '-prod'), '', '')`,
    ),
  );
  await h(
    "resource_environments",
    1,
    3600,
    buckets5m / 12,
    4,
    key(
      4,
      `('resource.environment', arrayElement(['prod', 'staging', 'dev', 'sandbox'], 1 + ${i}), '', '', '', '')`,
    ),
  );
  if (resources === undefined)
    await h(
      "resource_environments",
      2,
      3600,
      buckets5m / 12,
      150,
      key(
        150,
        `('resource.environment', arrayElement(['prod', 'staging', 'dev', 'sandbox'], 1 + ${i} % 4), 'resource.name', concat('resource-', toString(${i}), '-', arrayElement(['prod', 'staging', 'dev', 'sandbox'], 1 + ${i} % 4)), '', '')`,
      ),
    );
  else await resourceEnvironments(w, resources);

  // Top values per 1h window, for the members the dashboards read, and agg_windows.
  const windows = YEAR_MS / 3_600_000;
  const members = [
    "llmStopReasons",
    "llmToolCallNames",
    "queryFingerprints",
    "queryNormalized",
    "responseReturnedColumnNames",
    "responseRowsSent",
    "responseReturnedColumnDataLabels",
    "triggeredPolicyNames",
  ];
  for (const job of [
    "logs_by_technology",
    "llm_by_provider_model",
    "policies_by_name_status",
    "data_labels_by_resource",
  ]) {
    await command(
      w,
      `INSERT INTO bench.agg_top_values (job, window_start, window_end, member, key, count, fetched_at)
       SELECT '${job}', toDateTime(${start} + intDiv(number, ${members.length * 10}) * 3600, 'UTC') AS ws, ws + 3600,
              arrayElement([${members.map((m) => `'${m}'`).join(",")}], 1 + intDiv(number % ${members.length * 10}, 10)),
              concat('value-', toString(number % 10)), 1 + cityHash64(number) % 500, ws + toIntervalMinute(70)
       FROM numbers(${windows * members.length * 10})`,
    );
  }
  await command(
    w,
    `INSERT INTO bench.agg_windows (job, window_start, window_end, query, interval_s, group_by, num_hits, histogram_rows, fetched_at)
     SELECT arrayElement(['logs_by_technology', 'logs_by_user_resource', 'policies_by_name_status', 'llm_by_provider_model', 'resource_environments', 'data_labels_by_resource'], 1 + number % 6),
            toDateTime(${start} + intDiv(number, 6) * 3600, 'UTC') AS ws, ws + 3600, '', 300, [], 1000 + number % 977, 100, ws + toIntervalMinute(70)
     FROM numbers(${windows * 6})`,
  );
  // A year of runs: sessions every minute, each aggregation job every five minutes.
  await command(
    w,
    `INSERT INTO bench.runs (run_id, job, started_at, finished_at, status, pages, rows_inserted, dead_letters, retries, error, updated_at)
     SELECT generateUUIDv4(number), job, started, started + toIntervalSecond(2), if(number % 997 = 0, 'failed', 'succeeded'),
            1, 400, if(number % 5000 = 0, 1, 0), if(number % 300 = 0, 2, 0), if(number % 997 = 0, 'LogsService/ListLogAggregations: unavailable', ''), started + toIntervalSecond(2)
     FROM (SELECT number, if(number % 11 < 5, 'sessions', concat('aggregations.', arrayElement(['logs_by_technology', 'logs_by_user_resource', 'policies_by_name_status', 'llm_by_provider_model', 'resource_environments', 'data_labels_by_resource'], 1 + number % 6))) AS job,
                  fromUnixTimestamp64Milli(toInt64(${END_MS - YEAR_MS} + number * 60000 * 5 / 11)) AS started
           FROM numbers(${Math.round((YEAR_MS / 60_000) * 2.2)}))`,
  );
  await command(
    w,
    `INSERT INTO bench.checkpoints VALUES ('sessions', fromUnixTimestamp64Milli(${END_MS}), '', fromUnixTimestamp64Milli(${END_MS}))`,
  );
  await command(
    w,
    `INSERT INTO bench.dead_letters SELECT 'sessions', hex(number), concat('ses_bad_', toString(number)), 'startTime: expected an RFC 3339 timestamp', '{}', fromUnixTimestamp64Milli(toInt64(${END_MS - YEAR_MS} + number * 86400000)), '' FROM numbers(300)`,
  );
}

async function timed(
  w: Warehouse,
  sql: string,
): Promise<{ ms: number; data: unknown[][] }> {
  const started = performance.now();
  const rs = await w.client.query({ query: sql, format: "JSONCompact" });
  const body = (await rs.json()) as unknown as { data: unknown[][] };
  return { ms: performance.now() - started, data: body.data };
}

/** One warm-up, then 7 runs: p50, p95 and the rows of the last run. */
async function measure(
  w: Warehouse,
  sql: string,
): Promise<{ p50: number; p95: number; data: unknown[][] }> {
  await timed(w, sql);
  const times: number[] = [];
  let data: unknown[][] = [];
  for (let i = 0; i < 7; i++) {
    const r = await timed(w, sql);
    times.push(r.ms);
    data = r.data;
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p95: percentile(times, 0.95), data };
}

export async function runDashboards(
  dataDir: string,
  sessions: number,
): Promise<{
  sessions: number;
  generateMs: number;
  variables: VariableLatency[];
  panels: PanelLatency[];
}> {
  const { w } = await openBench(dataDir);
  const generated = performance.now();
  await generateSessions(w, sessions);
  await generateAggregations(w);
  // Steady state: a long-running server has merged its parts in the background by now.
  for (const t of [
    "sessions",
    "agg_histogram",
    "agg_top_values",
    "agg_windows",
    "runs",
    "user_resource_first_seen",
    "user_active_days",
  ])
    await command(w, `OPTIMIZE TABLE bench.${t} FINAL`);
  const generateMs = performance.now() - generated;
  await w.client.command({ query: "USE bench" });

  const range: TimeRange = { fromMs: END_MS - 30 * DAY, toMs: END_MS };
  const variableLatency: VariableLatency[] = [];
  const panels: PanelLatency[] = [];
  for (const { dashboard } of loadDashboards()) {
    const variables: TemplateVariable[] = [];
    for (const v of dashboard.templating.list) {
      if (v.type === "textbox" || v.type === "custom") {
        let value = v.current.value;
        const sample = TEXTBOX_SAMPLES[v.name];
        if (value === "" && sample !== undefined) {
          const first = (await timed(w, sample)).data[0]?.[0];
          value = typeof first === "string" ? first : "";
        }
        variables.push({ name: v.name, current: value, options: [value] });
        continue;
      }
      // The ad hoc filter's keys and values: run when the filter bar is opened.
      if (v.type === "constant" && v.name === "clickhouse_adhoc_query") {
        const m = await measure(w, v.query);
        variableLatency.push({
          dashboard: dashboard.title,
          variable: `${v.name} (ad hoc filter values)`,
          p50: m.p50,
          p95: m.p95,
          rows: m.data.length,
        });
        continue;
      }
      if (v.type === "constant") {
        variables.push({ name: v.name, current: v.query, options: [v.query] });
        continue;
      }
      if (v.type !== "query") continue;
      const sql = renderQuery(v.query, {
        range,
        intervalMs: queryInterval(range),
        variables,
      });
      const m = await measure(w, sql);
      variableLatency.push({
        dashboard: dashboard.title,
        variable: v.name,
        p50: m.p50,
        p95: m.p95,
        rows: m.data.length,
      });
      variables.push({
        name: v.name,
        current: v.multi ? [ALL] : ALL,
        options: m.data.map((r) => String(r[0])),
        allValue: v.allValue,
      });
    }
    for (const panel of dashboard.panels) {
      for (const target of panel.targets ?? []) {
        const sql = renderQuery(target.rawSql, {
          range,
          intervalMs: queryInterval(range, panel.interval),
          variables,
        });
        const m = await measure(w, sql);
        panels.push({
          dashboard: dashboard.title,
          panel: panel.title,
          p50: m.p50,
          p95: m.p95,
          rows: m.data.length,
        });
      }
    }
  }
  await w.close();
  return { sessions, generateMs, variables: variableLatency, panels };
}

/**
 * The org shape's `resource_environments` histogram of level 2: every resource every hour of the
 * year, with its environment (8,760 × 2,000 rows for the enterprise).
 */
export function resourceEnvironments(
  w: Warehouse,
  resources: readonly { name: string; environment: string }[],
): Promise<void> {
  const n = resources.length;
  const at = (values: string[]) =>
    `arrayElement([${stringList(values)}], 1 + number % ${n})`;
  return histogramRows(
    w,
    "resource_environments",
    2,
    3600,
    YEAR_MS / 3_600_000,
    n,
    `('resource.environment', ${at(resources.map((r) => r.environment))}, 'resource.name', ${at(resources.map((r) => r.name))}, '', '')`,
  );
}
