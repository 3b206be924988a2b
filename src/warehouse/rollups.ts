// The daily rollups (migrations/0013, 0020, 0021, 0038, 0044, 0045, 0046, 0047, 0048, 0051) and the monthly
// ones (0047, 0048, 0049, 0050): which days changed since they were computed, which are settled,
// and the computation of a set of days from the deduplicated rows (per person × resource × technology ×
// connector × status, per technology, per user group × resource × technology, per client IP
// address × user type, per machine account × address, per person × resource with the person's
// groups and type, per parent session, per resource with its people, per native user with the
// person behind it, per technology × person × resource, per machine account × resource, per
// account acting for people, and per half hour × user type), superseding the rows an earlier
// computation of the same days wrote, then of their months (per person, resource, technology,
// client IP address, group × resource, and person × resource); and the aggregation jobs' daily
// rollups: the returned data labels (0013) and the resources' environments (0053).
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { chTime } from "./format.js";
import { selectRows } from "./select.js";
import { FINAL_STATUSES } from "./session-rows.js";
import { Tables } from "./tables.js";
import { existingTables } from "./migrate.js";
import { ENVIRONMENT_JOB } from "../config/jobs.js";

/** The `rollup_days` source of the sessions rollup. */
export const SESSIONS_ROLLUP_SOURCE = "sessions";

/**
 * A period longer than this many days (or one that starts before the raw retention) reads the
 * rolled-up days from the rollups: the reports, and the sessions overview's `long_range`
 * constant (dashboards/sessions-overview.json), which states the same number in seconds.
 */
export const LONG_RANGE_DAYS = 31;

/**
 * The `rollup_days` source of the environment rollup (migrations/0053), the name of the job it
 * reads: the `resource_environments` view reads the days recorded under it from the rollup.
 */
export const ENVIRONMENT_ROLLUP_SOURCE = ENVIRONMENT_JOB;

/** The `rollup_days` source of an aggregation job's data-label rollup. */
function dataLabelRollupSource(job: string): string {
  return `data_labels.${job}`;
}

/** The quantiles of the session duration a rollup keeps (as a mergeable state). */
const ROLLUP_DURATION_QUANTILES = [0.5, 0.9, 0.99] as const;

/** The quantiles of the t-digest state (`duration_tdigest`): those the dashboards show. */
const ROLLUP_TDIGEST_QUANTILES = [0.5, 0.95] as const;

/** A day whose rows changed since it was last computed (or that never was). */
export interface ChangedDay {
  /** "YYYY-MM-DD". */
  day: string;
  /** Latest fetch among the day's rows now. */
  fetchedMax: string;
}

/** Where a rollup's source rows are: their table, the time column and its bounds, a filter. */
interface RollupRows {
  table: string;
  time: string;
  /** The time column's value at the start of the day parameter `{name:Date}`. */
  bound: (name: string) => string;
  filter?: string;
}

/** The sessions rollup's source rows. */
const SESSION_ROWS: RollupRows = {
  table: Tables.sessions,
  time: "start_time",
  bound: (name) => `toDateTime64({${name}:Date}, 3, 'UTC')`,
};

/** A data-label rollup's source rows: the level-1 histogram rows of its job ({job}). */
const DATA_LABEL_ROWS: RollupRows = {
  table: Tables.aggHistogram,
  time: "bucket_time",
  bound: (name) => `toDateTime({${name}:Date}, 'UTC')`,
  filter: "job = {job:String} AND level = 1",
};

/** The environment rollup's source rows: the level-2 histogram rows of ENVIRONMENT_JOB. */
const ENVIRONMENT_ROWS: RollupRows = {
  ...DATA_LABEL_ROWS,
  filter: "job = {job:String} AND level = 2",
};

/** Days in [fromDay, toDay) whose latest fetch differs from the one recorded when computed. */
export async function changedSessionDays(
  w: Warehouse,
  range: { fromDay: string; toDay: string },
): Promise<ChangedDay[]> {
  return changedDays(w, SESSION_ROWS, SESSIONS_ROLLUP_SOURCE, range);
}

/** The same for the level-1 histogram rows of an aggregation job. */
export async function changedDataLabelDays(
  w: Warehouse,
  job: string,
  range: { fromDay: string; toDay: string },
): Promise<ChangedDay[]> {
  return changedDays(w, DATA_LABEL_ROWS, dataLabelRollupSource(job), range, {
    job,
  });
}

/** The same for the environment rollup: the level-2 histogram rows of ENVIRONMENT_JOB. */
export async function changedEnvironmentDays(
  w: Warehouse,
  range: { fromDay: string; toDay: string },
): Promise<ChangedDay[]> {
  return changedDays(w, ENVIRONMENT_ROWS, ENVIRONMENT_ROLLUP_SOURCE, range, {
    job: ENVIRONMENT_JOB,
  });
}

async function changedDays(
  w: Warehouse,
  rows: RollupRows,
  source: string,
  range: { fromDay: string; toDay: string },
  params: Record<string, unknown> = {},
): Promise<ChangedDay[]> {
  const filter = rows.filter === undefined ? "" : `${rows.filter} AND `;
  const current = `SELECT toDate(${rows.time}) AS day, max(fetched_at) AS fetched_max
     FROM ${qualified(w, rows.table)}
     WHERE ${filter}${rows.time} >= ${rows.bound("from")} AND ${rows.time} < ${rows.bound("to")}
     GROUP BY day`;
  return selectRows<ChangedDay>(
    w,
    `SELECT toString(c.day) AS day, toString(c.fetched_max) AS fetchedMax
     FROM (${current}) AS c
     LEFT JOIN (
       SELECT day, argMax(source_fetched_max, computed_at) AS recorded
       FROM ${qualified(w, Tables.rollupDays)}
       WHERE source = {source:String}
       GROUP BY day
     ) AS r ON r.day = c.day
     WHERE c.fetched_max != r.recorded
     ORDER BY c.day`,
    { ...params, source, from: range.fromDay, to: range.toDay },
  );
}

/** Sessions of each of `days` whose latest read is not final (still open, or of unknown status). */
export async function openSessionsByDay(
  w: Warehouse,
  days: readonly string[],
): Promise<Map<string, number>> {
  if (days.length === 0) return new Map();
  const rows = await selectRows<{ day: string; open: string | number }>(
    w,
    `SELECT toString(toDate(start_time)) AS day, countIf(session_status NOT IN {final:Array(String)}) AS open
     FROM ${qualified(w, Tables.sessions)} FINAL
     WHERE ${sessionDaysFilter()}
     GROUP BY day`,
    { ...dayParams(days), final: [...FINAL_STATUSES] },
  );
  return new Map(rows.map((r) => [r.day, Number(r.open)]));
}

/** The rows of `days`, bounded on the sort key first so FINAL reads only their parts. */
function sessionDaysFilter(): string {
  return `start_time >= toDateTime64({first:Date}, 3, 'UTC')
       AND start_time < toDateTime64({last:Date}, 3, 'UTC') + INTERVAL 1 DAY
       AND toDate(start_time) IN {days:Array(Date)}`;
}

function dayParams(days: readonly string[]): Record<string, unknown> {
  const sorted = [...days].sort();
  return { days: sorted, first: sorted[0], last: sorted.at(-1) };
}

const ROLLUP_KEYS =
  "user_key, resource_name, resource_technology, connector_name, session_status";

/**
 * Computes the sessions rollups of `days` from `sessions FINAL` (one row per session, its last
 * state), one insert per table, each also writing sessions = 0 for every key an earlier
 * computation of those days held and this one does not; then records each day's `fetchedMax`
 * as computed.
 * `fetchedMax` must have been read before this runs: a read arriving in between moves the
 * day's latest fetch past it, and the day is computed again next time.
 */
export async function computeSessionRollups(
  w: Warehouse,
  days: readonly ChangedDay[],
  computedAtMs: number,
): Promise<number> {
  if (days.length === 0) return 0;
  const at = chTime(computedAtMs);
  const params = { ...dayParams(days.map((d) => d.day)), at };
  const q = ROLLUP_DURATION_QUANTILES.join(", ");
  const td = ROLLUP_TDIGEST_QUANTILES.join(", ");
  const sessions = `FROM ${qualified(w, Tables.sessions)} FINAL WHERE ${sessionDaysFilter()}`;
  await supersedingInsert(w, {
    table: Tables.sessionRollupsDaily,
    keys: ROLLUP_KEYS,
    columns: `sessions, distinct_sessions, child_sessions, duration_ms_sum, duration_quantiles,
       user_type, duration_sessions, duration_ms_max, last_start_time, duration_tdigest`,
    computed: `SELECT toDate(start_time) AS day, ${ROLLUP_KEYS},
        count(), uniqExact(id), countIf(parent_session_id != ''), sum(ifNull(duration_ms, 0)),
        quantilesState(${q})(duration_ms),
        any(user_type), count(duration_ms), max(ifNull(duration_ms, 0)), max(start_time),
        quantilesTDigestState(${td})(duration_ms), ${COMPUTED_AT}
      ${sessions}
      GROUP BY day, ${ROLLUP_KEYS}`,
    zeroed: `0, 0, 0, 0, duration_quantiles, user_type, 0, 0, last_start_time, duration_tdigest`,
    count: "sessions",
    current: `SELECT toDate(start_time) AS day, ${ROLLUP_KEYS} ${sessions}`,
    params,
  });
  await supersedingInsert(w, {
    table: Tables.sessionTechnologyRollupsDaily,
    keys: "resource_technology",
    columns: `sessions, duration_sessions, duration_ms_max, duration_tdigest, users, resources`,
    computed: `SELECT toDate(start_time) AS day, resource_technology,
        count(), count(duration_ms), max(ifNull(duration_ms, 0)),
        quantilesTDigestState(${td})(duration_ms), uniqState(toString(user_key)),
        uniqState(toString(resource_name)), ${COMPUTED_AT}
      ${sessions}
      GROUP BY day, resource_technology`,
    zeroed: "0, 0, 0, duration_tdigest, users, resources",
    count: "sessions",
    current: `SELECT toDate(start_time), resource_technology ${sessions}`,
    params,
  });
  await computeAudienceRollups(w, sessions, params);
  await computeUserResourceRollups(w, sessions, params);
  await computeEndUserRollups(w, sessions, params);
  await computeUserTypeRollups(w, sessions, params);
  await computePeopleRollups(w, params);
  const counts = await selectRows<{ day: string; n: string }>(
    w,
    `SELECT toString(toDate(start_time)) AS day, count() AS n ${sessions} GROUP BY day`,
    params,
  );
  const byDay = new Map(counts.map((c) => [c.day, Number(c.n)]));
  await recordDays(w, SESSIONS_ROLLUP_SOURCE, days, computedAtMs, byDay);
  await computeMonthlyRollups(w, days, at);
  return [...byDay.values()].reduce((a, b) => a + b, 0);
}

/**
 * The monthly rollups (migrations/0047) of the months of `days`, each summing session_rollups_daily
 * (per technology: session_technology_rollups_daily) over exactly the days of its month
 * `rollup_days` holds (so after `recordDays`), superseding the same way as the daily rollups.
 */
async function computeMonthlyRollups(
  w: Warehouse,
  days: readonly ChangedDay[],
  at: string,
): Promise<void> {
  const months = [...new Set(days.map((d) => `${d.day.slice(0, 7)}-01`))];
  const params = { days: months, at };
  const rolledUp = (table: string) => `FROM ${qualified(w, table)} FINAL
      WHERE toStartOfMonth(day) IN {days:Array(Date)} AND sessions > 0
        AND day IN (SELECT day FROM ${qualified(w, Tables.rollupDays)} FINAL
                    WHERE source = '${SESSIONS_ROLLUP_SOURCE}' AND toStartOfMonth(day) IN {days:Array(Date)})`;
  const daily = rolledUp(Tables.sessionRollupsDaily);
  const technologies = rolledUp(Tables.sessionTechnologyRollupsDaily);
  await monthlyInsert(w, params, {
    table: Tables.userRollupsMonthly,
    keys: "user_key",
    from: daily,
    columns: "user_type, sessions, resources, duration_ms_sum",
    sums: "any(user_type), sum(sessions), uniqState(toString(resource_name)), sum(duration_ms_sum)",
    zeroed: "user_type, 0, resources, 0",
  });
  await monthlyInsert(w, params, {
    table: Tables.resourceRollupsMonthly,
    keys: "resource_name, resource_technology",
    from: daily,
    columns: "sessions, users, last_start_time",
    sums: "sum(sessions), uniqState(toString(user_key)), max(last_start_time)",
    zeroed: "0, users, last_start_time",
  });
  // Per client IP address and user type (migrations/0048).
  await monthlyInsert(w, params, {
    table: Tables.clientIpRollupsMonthly,
    keys: CLIENT_IP_KEYS,
    from: rolledUp(Tables.clientIpRollupsDaily),
    columns: "sessions, users, some_users, first_start_time, last_start_time",
    sums: `sum(sessions), uniqMergeState(users),
        arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_users)))), 1, ${CLIENT_IP_SOME_USERS}),
        min(first_start_time), max(last_start_time)`,
    zeroed: "0, users, some_users, first_start_time, last_start_time",
  });
  // Per user group, resource and technology (migrations/0049).
  await monthlyInsert(w, params, {
    table: Tables.groupResourceRollupsMonthly,
    keys: GROUP_RESOURCE_KEYS,
    from: rolledUp(Tables.groupResourceRollupsDaily),
    columns: "sessions, users, first_start_time, last_start_time",
    sums: "sum(sessions), uniqMergeState(users), min(first_start_time), max(last_start_time)",
    zeroed: "0, users, first_start_time, last_start_time",
  });
  // Per person, resource, technology, connector, groups and type (migrations/0050).
  await monthlyInsert(w, params, {
    table: Tables.userResourceRollupsMonthly,
    keys: USER_RESOURCE_KEYS,
    from: rolledUp(Tables.userResourceRollupsDaily),
    columns: "sessions, first_start_time, last_start_time, native_usernames",
    sums: `sum(sessions), min(first_start_time), max(last_start_time),
        arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(native_usernames)))), 1, ${USER_RESOURCE_SOME_NATIVE_USERS})`,
    zeroed: "0, first_start_time, last_start_time, native_usernames",
  });
  await monthlyInsert(w, params, {
    table: Tables.technologyRollupsMonthly,
    keys: "resource_technology",
    from: technologies,
    columns: "sessions, users, resources",
    sums: "sum(sessions), uniqMergeState(users), uniqMergeState(resources)",
    zeroed: "0, users, resources",
  });
}

/**
 * A monthly rollup of `from` (a daily rollup's rows of the months' rolled-up days): per month and
 * `keys`, `sums` of the days' rows as `columns`, superseded as supersedingInsert does (a key a
 * month no longer has is written again with `zeroed`, its `sessions` 0).
 */
async function monthlyInsert(
  w: Warehouse,
  params: Record<string, unknown>,
  m: {
    table: string;
    keys: string;
    from: string;
    columns: string;
    sums: string;
    zeroed: string;
  },
): Promise<void> {
  await supersedingInsert(w, {
    table: m.table,
    keys: m.keys,
    columns: m.columns,
    computed: `SELECT toStartOfMonth(day) AS month, ${m.keys}, ${m.sums}, ${COMPUTED_AT}
      ${m.from}
      GROUP BY month, ${m.keys}`,
    zeroed: m.zeroed,
    count: "sessions",
    current: `SELECT toStartOfMonth(day), ${m.keys} ${m.from}`,
    params,
  });
}

/** The people (resources) the address rollups name per day: the panels show five. */
const CLIENT_IP_SOME_USERS = 5;

/** The keys of client_ip_rollups_daily after its day. */
const CLIENT_IP_KEYS = "client_ip_address, user_type";

/** The keys of machine_address_rollups_daily after its day. */
const MACHINE_ADDRESS_KEYS = "user_key, client_ip_address";

/** The sessions machine_address_rollups_daily counts: a machine account's, naming no end user. */
const MACHINE_ADDRESS_SESSIONS = `user_type = 'machine' AND end_user_email = '' AND end_user_name = ''
       AND client_ip_address != ''`;

/**
 * The rollups of who the sessions came from, for the same days as the finer rollup: per user
 * group × resource × technology, per client IP address × user type, and per machine account ×
 * address.
 */
async function computeAudienceRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  const groups = `SELECT toDate(start_time) AS day, arrayJoin(user_groups) AS user_group,
        resource_name, resource_technology, start_time, user_key ${sessions}`;
  await supersedingInsert(w, {
    table: Tables.groupResourceRollupsDaily,
    keys: GROUP_RESOURCE_KEYS,
    columns: "sessions, users, first_start_time, last_start_time",
    computed: `SELECT day, ${GROUP_RESOURCE_KEYS}, count(), uniqState(toString(user_key)),
        min(start_time), max(start_time), ${COMPUTED_AT}
      FROM (${groups})
      GROUP BY day, ${GROUP_RESOURCE_KEYS}`,
    zeroed: "0, users, first_start_time, last_start_time",
    count: "sessions",
    current: `SELECT day, ${GROUP_RESOURCE_KEYS} FROM (${groups})`,
    params,
  });
  await supersedingInsert(w, {
    table: Tables.clientIpRollupsDaily,
    keys: CLIENT_IP_KEYS,
    columns: "sessions, users, some_users, first_start_time, last_start_time",
    computed: `SELECT toDate(start_time) AS day, ${CLIENT_IP_KEYS}, count(),
        uniqState(toString(user_key)),
        arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, ${CLIENT_IP_SOME_USERS}),
        min(start_time), max(start_time), ${COMPUTED_AT}
      ${sessions}
      GROUP BY day, ${CLIENT_IP_KEYS}`,
    zeroed: "0, users, some_users, first_start_time, last_start_time",
    count: "sessions",
    current: `SELECT toDate(start_time), ${CLIENT_IP_KEYS} ${sessions}`,
    params,
  });
  await computeMachineAddressRollups(w, sessions, params);
  await computeChildSessionRollups(w, sessions, params);
}

/** The sessions that name a parent, per parent session (migrations/0047). */
async function computeChildSessionRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  const children = `${sessions} AND parent_session_id != ''`;
  await supersedingInsert(w, {
    table: Tables.childSessionRollupsDaily,
    keys: "parent_session_id",
    columns:
      "child_sessions, some_resources, user_key, first_start_time, last_start_time",
    computed: `SELECT toDate(start_time) AS day, parent_session_id, count(),
        arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, ${CLIENT_IP_SOME_USERS}),
        any(user_key), min(start_time), max(start_time), ${COMPUTED_AT}
      ${children}
      GROUP BY day, parent_session_id`,
    zeroed: "0, some_resources, user_key, first_start_time, last_start_time",
    count: "child_sessions",
    current: `SELECT toDate(start_time), parent_session_id ${children}`,
    params,
  });
}

/**
 * The machine accounts' sessions that named no end user, per account and address, and per
 * account, resource, technology and address.
 */
async function computeMachineAddressRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  const machines = `${sessions} AND ${MACHINE_ADDRESS_SESSIONS}`;
  await supersedingInsert(w, {
    table: Tables.machineAddressRollupsDaily,
    keys: MACHINE_ADDRESS_KEYS,
    columns:
      "sessions, some_resources, first_start_time, last_start_time, last_session_id",
    computed: `SELECT toDate(start_time) AS day, ${MACHINE_ADDRESS_KEYS}, count(),
        arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, ${CLIENT_IP_SOME_USERS}),
        min(start_time), max(start_time), argMax(id, start_time), ${COMPUTED_AT}
      ${machines}
      GROUP BY day, ${MACHINE_ADDRESS_KEYS}`,
    zeroed:
      "0, some_resources, first_start_time, last_start_time, last_session_id",
    count: "sessions",
    current: `SELECT toDate(start_time), ${MACHINE_ADDRESS_KEYS} ${machines}`,
    params,
  });
  await supersedingInsert(w, {
    table: Tables.machineResourceRollupsDaily,
    keys: MACHINE_RESOURCE_KEYS,
    columns: "sessions, first_start_time, last_start_time, last_session_id",
    computed: `SELECT toDate(start_time) AS day, ${MACHINE_RESOURCE_KEYS}, count(),
        min(start_time), max(start_time), argMax(id, start_time), ${COMPUTED_AT}
      ${machines}
      GROUP BY day, ${MACHINE_RESOURCE_KEYS}`,
    zeroed: "0, first_start_time, last_start_time, last_session_id",
    count: "sessions",
    current: `SELECT toDate(start_time), ${MACHINE_RESOURCE_KEYS} ${machines}`,
    params,
  });
}

/** The keys of machine_resource_rollups_daily after its day (migrations/0048). */
const MACHINE_RESOURCE_KEYS =
  "user_key, resource_name, resource_technology, client_ip_address";

/** The database users user_resource_rollups_daily names per day: the panel shows three. */
const USER_RESOURCE_SOME_NATIVE_USERS = 3;

/** The keys of user_resource_rollups_daily after its day. */
const USER_RESOURCE_KEYS =
  "user_key, resource_name, resource_technology, connector_name, user_groups, user_type";

/**
 * Per person × resource × technology × connector × groups × type, for the _Users × resources_ panel
 * (migrations/0045).
 */
async function computeUserResourceRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  await supersedingInsert(w, {
    table: Tables.userResourceRollupsDaily,
    keys: USER_RESOURCE_KEYS,
    columns: "sessions, first_start_time, last_start_time, native_usernames",
    computed: `SELECT toDate(start_time) AS day, ${USER_RESOURCE_KEYS}, count(),
        min(start_time), max(start_time),
        arraySlice(arraySort(groupUniqArray(native_username)), 1, ${USER_RESOURCE_SOME_NATIVE_USERS}),
        ${COMPUTED_AT}
      ${sessions}
      GROUP BY day, ${USER_RESOURCE_KEYS}`,
    zeroed: "0, first_start_time, last_start_time, native_usernames",
    count: "sessions",
    current: `SELECT toDate(start_time), ${USER_RESOURCE_KEYS} ${sessions}`,
    params,
  });
}

/** The keys of group_resource_rollups_daily after its day: a session once under each group of its user. */
const GROUP_RESOURCE_KEYS = "user_group, resource_name, resource_technology";

/** The computation time every row of one rollup pass carries (`{at}` of its parameters). */
const COMPUTED_AT = "toDateTime64({at:String}, 3, 'UTC')";

/**
 * Writes a daily rollup's rows for `{days}` and supersedes the rest: `computed` selects the
 * days' rows (day, `keys`, `columns`, then COMPUTED_AT), and every key an earlier computation
 * of those days held with `count` > 0 and `current` (day and `keys` of the days' source rows)
 * no longer has is written again from the table's own row with `zeroed` as its `columns`. Read
 * with FINAL, the table then holds exactly this computation's keys with a nonzero `count`.
 */
async function supersedingInsert(
  w: Warehouse,
  o: {
    table: string;
    keys: string;
    columns: string;
    computed: string;
    zeroed: string;
    count: string;
    current: string;
    /** Narrows the superseded rows further (e.g. to one job), ANDed to the days. */
    where?: string;
    params: Record<string, unknown>;
  },
): Promise<void> {
  const table = qualified(w, o.table);
  await w.client.command({
    query: `INSERT INTO ${table} (day, ${o.keys}, ${o.columns}, computed_at)
      ${o.computed}
      UNION ALL
      SELECT day, ${o.keys}, ${o.zeroed}, ${COMPUTED_AT}
      FROM ${table} FINAL
      WHERE day IN {days:Array(Date)} AND ${o.count} > 0 ${o.where ? `AND ${o.where}` : ""}
        AND (day, ${o.keys}) NOT IN (${o.current})`,
    query_params: o.params,
  });
}

/** The data-label rollup of `days` for an aggregation job, superseding the same way. */
export async function computeDataLabelRollups(
  w: Warehouse,
  job: string,
  days: readonly ChangedDay[],
  computedAtMs: number,
): Promise<void> {
  if (days.length === 0) return;
  const at = chTime(computedAtMs);
  const labels = `FROM ${qualified(w, Tables.aggHistogram)} FINAL
      WHERE job = {job:String} AND level = 1 AND toDate(bucket_time) IN {days:Array(Date)}`;
  await supersedingInsert(w, {
    table: Tables.dataLabelRollupsDaily,
    keys: "job, data_label",
    columns: "count",
    computed: `SELECT toDate(bucket_time) AS day, job, key1 AS data_label, sum(count), ${COMPUTED_AT}
      ${labels}
      GROUP BY day, job, data_label`,
    zeroed: "0",
    count: "count",
    current: `SELECT toDate(bucket_time), job, key1 ${labels}`,
    where: "job = {job:String}",
    params: { job, days: days.map((d) => d.day), at },
  });
  await recordDays(
    w,
    dataLabelRollupSource(job),
    days,
    computedAtMs,
    new Map(),
  );
}

/**
 * The environment rollup of `days` (migrations/0053): per day, resource and environment of
 * ENVIRONMENT_JOB's level-2 histogram rows that count logs, their logs and latest bucket,
 * superseding the same way; then records the days under ENVIRONMENT_ROLLUP_SOURCE.
 */
export async function computeEnvironmentRollups(
  w: Warehouse,
  days: readonly ChangedDay[],
  computedAtMs: number,
): Promise<void> {
  if (days.length === 0) return;
  const buckets = `FROM ${qualified(w, Tables.aggHistogram)} FINAL
      WHERE job = {job:String} AND level = 2 AND count > 0
        AND bucket_time >= toDateTime({first:Date}, 'UTC')
        AND bucket_time < toDateTime({last:Date}, 'UTC') + INTERVAL 1 DAY
        AND toDate(bucket_time) IN {days:Array(Date)}`;
  await supersedingInsert(w, {
    table: Tables.resourceEnvironmentRollupsDaily,
    keys: "resource_name, environment",
    columns: "count, last_seen",
    computed: `SELECT toDate(bucket_time) AS day, key2 AS resource_name, key1 AS environment,
        sum(count), max(bucket_time), ${COMPUTED_AT}
      ${buckets}
      GROUP BY day, resource_name, environment`,
    zeroed: "0, last_seen",
    count: "count",
    current: `SELECT toDate(bucket_time), key2, key1 ${buckets}`,
    params: {
      ...dayParams(days.map((d) => d.day)),
      job: ENVIRONMENT_JOB,
      at: chTime(computedAtMs),
    },
  });
  await recordDays(w, ENVIRONMENT_ROLLUP_SOURCE, days, computedAtMs, new Map());
}

async function recordDays(
  w: Warehouse,
  source: string,
  days: readonly ChangedDay[],
  computedAtMs: number,
  rowsByDay: ReadonlyMap<string, number>,
): Promise<void> {
  await w.client.insert({
    table: qualified(w, Tables.rollupDays),
    values: days.map((d) => ({
      source,
      day: d.day,
      source_fetched_max: d.fetchedMax,
      rows: rowsByDay.get(d.day) ?? 0,
      computed_at: chTime(computedAtMs),
    })),
    format: "JSONEachRow",
  });
}

/** What `status` shows of the rollups: days computed per source and the latest day. */
export interface RollupStatus {
  source: string;
  days: number;
  lastDay: string | null;
  lastComputedAt: string | null;
}

export async function rollupStatus(w: Warehouse): Promise<RollupStatus[]> {
  const rows = await selectRows<{
    source: string;
    days: string | number;
    last_day: string;
    last_computed: string;
  }>(
    w,
    `SELECT source, count() AS days, toString(max(day)) AS last_day, toString(max(computed_at)) AS last_computed
     FROM ${qualified(w, Tables.rollupDays)} FINAL
     GROUP BY source ORDER BY source`,
  );
  return rows.map((r) => ({
    source: r.source,
    days: Number(r.days),
    lastDay: r.last_day,
    lastComputedAt: r.last_computed,
  }));
}

/** The keys of resource_people_rollups_daily after its day. */
const RESOURCE_PEOPLE_KEYS = "resource_id, resource_name";

/** The keys of native_user_rollups_daily after its day: the person as sessions_enriched finds them. */
const NATIVE_USER_KEYS =
  "resource_name, native_username, person_via, person_name, person_email";

/** The keys of technology_pair_rollups_daily after its day. */
const TECHNOLOGY_PAIR_KEYS = "resource_technology, user_key, resource_name";

/**
 * The technologies technology_pair_rollups_daily holds: the ones the AI and LLM activity
 * dashboard reads from it (its other rows would repeat session_rollups_daily for no reader).
 */
export const AI_TECHNOLOGIES = ["llm", "mcp"] as const;

/** The sessions made through a native user directly: no brand member named. */
const NATIVE_ONLY = "user_id = '' AND end_user_id = ''";

/**
 * The rollups of the people behind the sessions, for the same days as the finer rollup: per
 * resource (a uniq state of the people, brand members' from `sessions`, the others' as
 * sessions_enriched finds them), per native user and the person behind it (the sessions made
 * through a native user directly), and per technology × person × resource.
 */
async function computePeopleRollups(
  w: Warehouse,
  params: Record<string, unknown>,
): Promise<void> {
  const sessions = `FROM ${qualified(w, Tables.sessions)} FINAL WHERE ${sessionDaysFilter()}`;
  const enriched = `FROM ${qualified(w, Tables.sessionsEnriched)} WHERE ${sessionDaysFilter()} AND ${NATIVE_ONLY}`;
  const aiSessions = `${sessions} AND resource_technology IN (${AI_TECHNOLOGIES.map((t) => `'${t}'`).join(", ")})`;
  // Without the sessions_enriched view (dropped on a warehouse that does without it), no person
  // is known behind a native user: those sessions count with no person, and the native-user
  // rollup, which only that view can fill, is not computed.
  const known = (await existingTables(w)).has(Tables.sessionsEnriched);
  const nativePeople = known
    ? `SELECT toDate(start_time) AS day, ${RESOURCE_PEOPLE_KEYS}, count() AS n,
        uniqStateIf(person_id, person_id != '') AS p, max(start_time) AS last
      ${enriched}
      GROUP BY day, ${RESOURCE_PEOPLE_KEYS}`
    : `SELECT toDate(start_time) AS day, ${RESOURCE_PEOPLE_KEYS}, count() AS n,
        uniqStateIf(toString(''), 0) AS p, max(start_time) AS last
      ${sessions} AND ${NATIVE_ONLY}
      GROUP BY day, ${RESOURCE_PEOPLE_KEYS}`;
  const people = `SELECT toDate(start_time) AS day, ${RESOURCE_PEOPLE_KEYS}, count() AS n,
        uniqState(if(end_user_id != '', end_user_id, user_id)) AS p, max(start_time) AS last
      ${sessions} AND NOT (${NATIVE_ONLY})
      GROUP BY day, ${RESOURCE_PEOPLE_KEYS}
      UNION ALL
      ${nativePeople}`;
  await supersedingInsert(w, {
    table: Tables.resourcePeopleRollupsDaily,
    keys: RESOURCE_PEOPLE_KEYS,
    columns: "sessions, persons, last_start_time",
    computed: `SELECT day, ${RESOURCE_PEOPLE_KEYS}, sum(n), uniqMergeState(p), max(last), ${COMPUTED_AT}
      FROM (${people})
      GROUP BY day, ${RESOURCE_PEOPLE_KEYS}`,
    zeroed: "0, persons, last_start_time",
    count: "sessions",
    current: `SELECT toDate(start_time), ${RESOURCE_PEOPLE_KEYS} ${sessions}`,
    params,
  });
  if (known) await computeNativeUserRollups(w, enriched, params);
  await supersedingInsert(w, {
    table: Tables.technologyPairRollupsDaily,
    keys: TECHNOLOGY_PAIR_KEYS,
    columns: "user_type, sessions, first_start_time, last_start_time",
    computed: `SELECT toDate(start_time) AS day, ${TECHNOLOGY_PAIR_KEYS}, any(user_type),
        count(), min(start_time), max(start_time), ${COMPUTED_AT}
      ${aiSessions}
      GROUP BY day, ${TECHNOLOGY_PAIR_KEYS}`,
    zeroed: "user_type, 0, first_start_time, last_start_time",
    count: "sessions",
    current: `SELECT toDate(start_time), ${TECHNOLOGY_PAIR_KEYS} ${aiSessions}`,
    params,
  });
}

/** The native-user rollup: the sessions made through a native user directly (`enriched`). */
async function computeNativeUserRollups(
  w: Warehouse,
  enriched: string,
  params: Record<string, unknown>,
): Promise<void> {
  const native = `${enriched} AND native_username != ''`;
  await supersedingInsert(w, {
    table: Tables.nativeUserRollupsDaily,
    keys: NATIVE_USER_KEYS,
    columns: "sessions, first_start_time, last_start_time",
    computed: `SELECT toDate(start_time) AS day, ${NATIVE_USER_KEYS}, count(), min(start_time),
        max(start_time), ${COMPUTED_AT}
      ${native}
      GROUP BY day, ${NATIVE_USER_KEYS}`,
    zeroed: "0, first_start_time, last_start_time",
    count: "sessions",
    current: `SELECT toDate(start_time), ${NATIVE_USER_KEYS} ${native}`,
    params,
  });
}

/** The sessions that named an end user: a machine account acting for a person. */
const END_USER_SESSIONS = "(end_user_email != '' OR end_user_name != '')";

/** The keys of end_user_rollups_daily after its day (migrations/0051). */
const END_USER_KEYS =
  "user_key, resource_name, resource_technology, connector_name, user_groups";

/**
 * Per account × resource × technology × connector × groups, the sessions that named an end user
 * and a uniq state of the end users' emails, for _Humans acting through machines_.
 */
async function computeEndUserRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  const named = `${sessions} AND ${END_USER_SESSIONS}`;
  await supersedingInsert(w, {
    table: Tables.endUserRollupsDaily,
    keys: END_USER_KEYS,
    columns: "sessions, end_users",
    computed: `SELECT toDate(start_time) AS day, ${END_USER_KEYS}, count(),
        uniqStateIf(end_user_email, end_user_email != ''), ${COMPUTED_AT}
      ${named}
      GROUP BY day, ${END_USER_KEYS}`,
    zeroed: "0, end_users",
    count: "sessions",
    current: `SELECT toDate(start_time), ${END_USER_KEYS} ${named}`,
    params,
  });
}

/** The half hour a session started in: the grain of user_type_rollups_half_hourly. */
const HALF_HOUR =
  "toStartOfInterval(toDateTime(start_time), INTERVAL 1800 second)";

/** Per half hour and user type, the sessions, for _Machine vs human sessions over time_. */
async function computeUserTypeRollups(
  w: Warehouse,
  sessions: string,
  params: Record<string, unknown>,
): Promise<void> {
  await supersedingInsert(w, {
    table: Tables.userTypeRollupsHalfHourly,
    keys: "half_hour, user_type",
    columns: "sessions",
    computed: `SELECT toDate(start_time) AS day, ${HALF_HOUR} AS half_hour, user_type, count(),
        ${COMPUTED_AT}
      ${sessions}
      GROUP BY day, half_hour, user_type`,
    zeroed: "0",
    count: "sessions",
    current: `SELECT toDate(start_time), ${HALF_HOUR}, user_type ${sessions}`,
    params,
  });
}
