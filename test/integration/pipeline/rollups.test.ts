// The daily rollups against the same summary computed from `sessions FINAL`: for every day, with
// a session read open first and completed later, reads repeated, a late session arriving for a
// day already rolled up, and a session whose status (and its user's groups) changed after its day
// was rolled up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import { ROLLUPS_KEYS_STREAM } from "../../../src/pipeline/names.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { chTime } from "../../../src/warehouse/format.js";
import {
  AI_TECHNOLOGIES,
  computeDataLabelRollups,
} from "../../../src/warehouse/rollups.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { readMigrations, renderSql } from "../../../src/warehouse/migrate.js";
import { retireSupersededKeys } from "../../../src/warehouse/session-keys.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

let w: Warehouse;
let config: Config;
beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
});
afterAll(async () => {
  await w.close();
});

const DAY = 86_400_000;
const D1 = Date.parse("2026-10-01T00:00:00Z");
const logger = createLogger({ level: "silent" });

interface Spec {
  id: string;
  startMs: number;
  status: string;
  user: string;
  resource: string;
  technology?: string;
  connector?: string;
  durationS?: number;
  parent?: string;
  /** The user's groups; by default those of GROUPS. */
  groups?: string[];
  /** Made through this native user directly: no brand member (no formal user). */
  native?: string;
  /** The person a machine account acted for (email left out when empty). */
  endUser?: { email: string; name: string };
}

/** The machine accounts (the others are people). */
const MACHINES = new Set(["carol"]);

/** The client IP address of each user's sessions (the others' sessions have none). */
const ADDRESSES: Record<string, string> = {
  alice: "10.1.0.1",
  bob: "10.1.0.1",
  carol: "10.1.0.2",
};

/** The groups of each user (the others are in none). */
const GROUPS: Record<string, string[]> = {
  alice: ["analysts", "admins"],
  bob: ["analysts"],
  dave: ["contractors"],
};

function session(spec: Spec) {
  const start = new Date(spec.startMs).toISOString();
  const durationS = spec.durationS;
  const raw = JSON.stringify({
    id: spec.id,
    startTime: start,
    sessionStatus: spec.status,
    ...(durationS !== undefined
      ? {
          endTime: new Date(spec.startMs + durationS * 1000).toISOString(),
          duration: `${durationS}s`,
        }
      : {}),
    user: {
      type: MACHINES.has(spec.user) ? "machine" : "human",
      username: spec.user,
      ...(spec.native !== undefined
        ? { native: { username: spec.native } }
        : {
            formal: {
              user: {
                id: `usr_${spec.user}`,
                email: `${spec.user}@acme.example`,
                groups: spec.groups ?? GROUPS[spec.user] ?? [],
              },
              ...(spec.endUser
                ? {
                    endUser: {
                      name: spec.endUser.name,
                      ...(spec.endUser.email
                        ? { email: spec.endUser.email }
                        : {}),
                    },
                  }
                : {}),
            },
          }),
    },
    resource: {
      type: "datastore",
      id: `res_${spec.resource}`,
      name: spec.resource,
      technology: spec.technology ?? "postgres",
    },
    connector: { id: "con_1", name: spec.connector ?? "edge-1" },
    ...(ADDRESSES[spec.user]
      ? { network: { clientIpAddress: ADDRESSES[spec.user] } }
      : {}),
    ...(spec.parent ? { parentSessionId: spec.parent } : {}),
  });
  return { raw, s: sessionSchema.parse(JSON.parse(raw)) };
}

async function store(specs: readonly Spec[], fetchedAtMs: number) {
  await insertRows(
    w,
    "sessions",
    specs.map((spec) => {
      const { s, raw } = session(spec);
      return sessionRow(s, raw, fetchedAtMs);
    }),
    { retries: 0 },
  );
}

const KEYS =
  "user_key, resource_name, resource_technology, connector_name, session_status";

/** The rollups' summary per day and key, merged as a dashboard merges them. */
async function fromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${KEYS}, sum(sessions) AS sessions,
            sum(distinct_sessions) AS distinct_sessions, sum(child_sessions) AS child_sessions,
            sum(duration_ms_sum) AS duration_ms_sum,
            toString(quantilesMerge(0.5, 0.9, 0.99)(duration_quantiles)) AS q,
            any(user_type) AS user_type, sum(duration_sessions) AS duration_sessions,
            max(duration_ms_max) AS duration_ms_max, toString(max(last_start_time)) AS last_start,
            toString(quantilesTDigestMerge(0.5, 0.95)(duration_tdigest)) AS td
     FROM (SELECT * FROM {db}.session_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${KEYS} ORDER BY day, ${KEYS}`,
  );
}

/** The same summary straight from the deduplicated sessions, for the given days. */
async function fromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${KEYS}, count() AS sessions,
            uniqExact(id) AS distinct_sessions, countIf(parent_session_id != '') AS child_sessions,
            sum(ifNull(duration_ms, 0)) AS duration_ms_sum,
            toString(quantiles(0.5, 0.9, 0.99)(duration_ms)) AS q,
            any(user_type) AS user_type, count(duration_ms) AS duration_sessions,
            max(ifNull(duration_ms, 0)) AS duration_ms_max, toString(max(start_time)) AS last_start,
            toString(quantilesTDigest(0.5, 0.95)(duration_ms)) AS td
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, ${KEYS} ORDER BY day, ${KEYS}`,
    { days },
  );
}

/** The per-technology rollup's summary per day and technology. */
async function technologyFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, resource_technology, sum(sessions) AS sessions,
            sum(duration_sessions) AS duration_sessions, max(duration_ms_max) AS duration_ms_max,
            toString(quantilesTDigestMerge(0.5, 0.95)(duration_tdigest)) AS td,
            uniqMerge(users) AS users, uniqMerge(resources) AS resources
     FROM (SELECT * FROM {db}.session_technology_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, resource_technology ORDER BY day, resource_technology`,
  );
}

/** The same straight from the deduplicated sessions. */
async function technologyFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, resource_technology, count() AS sessions,
            count(duration_ms) AS duration_sessions, max(ifNull(duration_ms, 0)) AS duration_ms_max,
            toString(quantilesTDigest(0.5, 0.95)(duration_ms)) AS td,
            uniq(user_key) AS users, uniq(resource_name) AS resources
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, resource_technology ORDER BY day, resource_technology`,
    { days },
  );
}

const GROUP_KEYS = "user_group, resource_name, resource_technology";

/** The per-group rollup's summary per day, group, resource and technology. */
async function groupsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${GROUP_KEYS}, sum(sessions) AS sessions,
            uniqMerge(users) AS users, toString(min(first_start_time)) AS first_start,
            toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.group_resource_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${GROUP_KEYS} ORDER BY day, ${GROUP_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions: each session once under each group. */
async function groupsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, arrayJoin(user_groups) AS user_group,
            resource_name, resource_technology, count() AS sessions, uniq(user_key) AS users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, ${GROUP_KEYS} ORDER BY day, ${GROUP_KEYS}`,
    { days },
  );
}

/** The per-address rollup's summary per day, client IP address and user type. */
async function addressesFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, client_ip_address, user_type, sum(sessions) AS sessions,
            uniqMerge(users) AS users,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_users)))), 1, 5) AS some_users,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.client_ip_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, client_ip_address, user_type ORDER BY day, client_ip_address, user_type`,
  );
}

/** The same straight from the deduplicated sessions. */
async function addressesFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, client_ip_address, user_type, count() AS sessions,
            uniq(user_key) AS users,
            arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, 5) AS some_users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, client_ip_address, user_type ORDER BY day, client_ip_address, user_type`,
    { days },
  );
}

/** The machine-address rollup's summary per day, machine account and address. */
async function machinesFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, user_key, client_ip_address, sum(sessions) AS sessions,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_resources)))), 1, 5) AS resources,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start,
            argMax(last_session_id, last_start_time) AS last_id
     FROM (SELECT * FROM {db}.machine_address_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, user_key, client_ip_address ORDER BY day, user_key, client_ip_address`,
  );
}

/** The same straight from the deduplicated sessions: a machine account's, naming no end user. */
async function machinesFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, user_key, client_ip_address, count() AS sessions,
            arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5) AS resources,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start,
            argMax(id, start_time) AS last_id
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)} AND user_type = 'machine'
       AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
     GROUP BY day, user_key, client_ip_address ORDER BY day, user_key, client_ip_address`,
    { days },
  );
}

/** The keys of the machine-resource rollup after its day. */
const MACHINE_RESOURCE_KEYS =
  "user_key, resource_name, resource_technology, client_ip_address";

/** The machine-resource rollup's summary per day, machine account, resource, technology and address. */
async function machineResourcesFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${MACHINE_RESOURCE_KEYS}, sum(sessions) AS sessions,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start,
            argMax(last_session_id, last_start_time) AS last_id
     FROM (SELECT * FROM {db}.machine_resource_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${MACHINE_RESOURCE_KEYS} ORDER BY day, ${MACHINE_RESOURCE_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions: a machine account's, naming no end user. */
async function machineResourcesFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${MACHINE_RESOURCE_KEYS}, count() AS sessions,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start,
            argMax(id, start_time) AS last_id
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)} AND user_type = 'machine'
       AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
     GROUP BY day, ${MACHINE_RESOURCE_KEYS} ORDER BY day, ${MACHINE_RESOURCE_KEYS}`,
    { days },
  );
}

/** The monthly per-address rollup's summary per month, client IP address and user type. */
async function addressMonthsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS month, client_ip_address, user_type, sum(sessions) AS sessions,
            uniqMerge(users) AS users,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_users)))), 1, 5) AS some_users,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.client_ip_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, client_ip_address, user_type ORDER BY month, client_ip_address, user_type`,
  );
}

/** The same straight from the deduplicated sessions of `days` (the rolled-up days). */
async function addressMonthsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toStartOfMonth(toDate(start_time))) AS month, client_ip_address, user_type,
            count() AS sessions, uniq(user_key) AS users,
            arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, 5) AS some_users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY month, client_ip_address, user_type ORDER BY month, client_ip_address, user_type`,
    { days },
  );
}

/** The monthly per-group-and-resource rollup's summary per month, group, resource and technology. */
async function groupMonthsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS month, user_group, resource_name, resource_technology,
            sum(sessions) AS sessions, uniqMerge(users) AS users,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.group_resource_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, user_group, resource_name, resource_technology
     ORDER BY month, user_group, resource_name, resource_technology`,
  );
}

/** The same straight from the deduplicated sessions of `days`, once under each group of the user. */
async function groupMonthsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toStartOfMonth(toDate(start_time))) AS month, arrayJoin(user_groups) AS user_group,
            resource_name, resource_technology, count() AS sessions, uniq(toString(user_key)) AS users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY month, user_group, resource_name, resource_technology
     ORDER BY month, user_group, resource_name, resource_technology`,
    { days },
  );
}

/** The monthly rollups' summaries per month and person, and per month and resource. */
async function monthsFromRollups() {
  const users = await select(
    w,
    `SELECT toString(day) AS month, user_key, any(user_type) AS user_type, sum(sessions) AS sessions,
            uniqMerge(resources) AS resources, sum(duration_ms_sum) AS duration_ms_sum
     FROM (SELECT * FROM {db}.user_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, user_key ORDER BY month, user_key`,
  );
  const resources = await select(
    w,
    `SELECT toString(day) AS month, resource_name, resource_technology, sum(sessions) AS sessions,
            uniqMerge(users) AS users, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.resource_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, resource_name, resource_technology ORDER BY month, resource_name, resource_technology`,
  );
  const technologies = await select(
    w,
    `SELECT toString(day) AS month, resource_technology, sum(sessions) AS sessions,
            uniqMerge(users) AS users, uniqMerge(resources) AS resources
     FROM (SELECT * FROM {db}.technology_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, resource_technology ORDER BY month, resource_technology`,
  );
  return { users, resources, technologies };
}

/** The per-parent rollup's summary per day and parent session. */
async function parentsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, parent_session_id, sum(child_sessions) AS children,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_resources)))), 1, 5) AS resources,
            any(user_key) AS user_key, toString(min(first_start_time)) AS first_start,
            toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.child_session_rollups_daily FINAL WHERE child_sessions > 0)
     GROUP BY day, parent_session_id ORDER BY day, parent_session_id`,
  );
}

/** The same straight from the deduplicated sessions that name a parent. */
async function parentsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, parent_session_id, count() AS children,
            arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5) AS resources,
            any(user_key) AS user_key, toString(min(start_time)) AS first_start,
            toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)} AND parent_session_id != ''
     GROUP BY day, parent_session_id ORDER BY day, parent_session_id`,
    { days },
  );
}

/** The same straight from the deduplicated sessions of `days`, by their month. */
async function monthsFromSessions(days: readonly string[]) {
  const of = `FROM {db}.sessions FINAL WHERE toString(toDate(start_time)) IN {days:Array(String)}`;
  const users = await select(
    w,
    `SELECT toString(toStartOfMonth(start_time)) AS month, user_key, any(user_type) AS user_type,
            count() AS sessions, uniq(resource_name) AS resources,
            sum(ifNull(duration_ms, 0)) AS duration_ms_sum
     ${of} GROUP BY month, user_key ORDER BY month, user_key`,
    { days },
  );
  const resources = await select(
    w,
    `SELECT toString(toStartOfMonth(start_time)) AS month, resource_name, resource_technology,
            count() AS sessions, uniq(user_key) AS users, toString(max(start_time)) AS last_start
     ${of} GROUP BY month, resource_name, resource_technology ORDER BY month, resource_name, resource_technology`,
    { days },
  );
  const technologies = await select(
    w,
    `SELECT toString(toStartOfMonth(start_time)) AS month, resource_technology, count() AS sessions,
            uniq(user_key) AS users, uniq(resource_name) AS resources
     ${of} GROUP BY month, resource_technology ORDER BY month, resource_technology`,
    { days },
  );
  return { users, resources, technologies };
}

/** The per-resource rollup's summary per day and resource: sessions, people, last start. */
async function resourcePeopleFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, resource_id, resource_name, sum(sessions) AS sessions,
            uniqMerge(persons) AS persons, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.resource_people_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, resource_id, resource_name ORDER BY day, resource_id, resource_name`,
  );
}

/** The same straight from sessions_enriched (sessions FINAL with the person behind each). */
async function resourcePeopleFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, resource_id, resource_name, count() AS sessions,
            uniqIf(person_id, person_id != '') AS persons, toString(max(start_time)) AS last_start
     FROM {db}.sessions_enriched
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, resource_id, resource_name ORDER BY day, resource_id, resource_name`,
    { days },
  );
}

const NATIVE_KEYS =
  "resource_name, native_username, person_via, person_name, person_email";

/** The native-user rollup's summary per day, native user and the person behind it. */
async function nativeFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${NATIVE_KEYS}, sum(sessions) AS sessions,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.native_user_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${NATIVE_KEYS} ORDER BY day, ${NATIVE_KEYS}`,
  );
}

/** The same from sessions_enriched: the sessions made through a native user directly. */
async function nativeFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${NATIVE_KEYS}, count() AS sessions,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions_enriched
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
       AND user_id = '' AND end_user_id = '' AND native_username != ''
     GROUP BY day, ${NATIVE_KEYS} ORDER BY day, ${NATIVE_KEYS}`,
    { days },
  );
}

const TECHNOLOGY_PAIR_KEYS = "resource_technology, user_key, resource_name";

/** The per technology × person × resource rollup's summary. */
async function technologyPairsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${TECHNOLOGY_PAIR_KEYS}, any(user_type) AS user_type,
            sum(sessions) AS sessions, toString(min(first_start_time)) AS first_start,
            toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.technology_pair_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${TECHNOLOGY_PAIR_KEYS} ORDER BY day, ${TECHNOLOGY_PAIR_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions. */
async function technologyPairsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${TECHNOLOGY_PAIR_KEYS}, any(user_type) AS user_type,
            count() AS sessions, toString(min(start_time)) AS first_start,
            toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
       AND resource_technology IN {ai:Array(String)}
     GROUP BY day, ${TECHNOLOGY_PAIR_KEYS} ORDER BY day, ${TECHNOLOGY_PAIR_KEYS}`,
    { days, ai: [...AI_TECHNOLOGIES] },
  );
}

/** The rollups of migration 0046 equal their summaries of `days` from the sessions. */
async function expectPeopleRolledUp(days: readonly string[]) {
  const resources = await resourcePeopleFromRollups();
  expect(resources.length).toBeGreaterThan(0);
  expect(resources).toEqual(await resourcePeopleFromSessions(days));
  expect(await nativeFromRollups()).toEqual(await nativeFromSessions(days));
  // The LLM and MCP sessions' pairs only: none before the test that stores some.
  expect(await technologyPairsFromRollups()).toEqual(
    await technologyPairsFromSessions(days),
  );
}

const USER_RESOURCE_KEYS =
  "user_key, resource_name, resource_technology, connector_name, user_groups, user_type";

/** The per-person-and-resource rollup's summary per day and key. */
async function usersFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${USER_RESOURCE_KEYS}, sum(sessions) AS sessions,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(native_usernames)))), 1, 3) AS native_users,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.user_resource_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${USER_RESOURCE_KEYS} ORDER BY day, ${USER_RESOURCE_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions. */
async function usersFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${USER_RESOURCE_KEYS}, count() AS sessions,
            arraySlice(arraySort(groupUniqArray(native_username)), 1, 3) AS native_users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, ${USER_RESOURCE_KEYS} ORDER BY day, ${USER_RESOURCE_KEYS}`,
    { days },
  );
}

/** The monthly per-person-and-resource rollup's summary per month and key. */
async function userMonthsFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS month, ${USER_RESOURCE_KEYS}, sum(sessions) AS sessions,
            arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(native_usernames)))), 1, 3) AS native_users,
            toString(min(first_start_time)) AS first_start, toString(max(last_start_time)) AS last_start
     FROM (SELECT * FROM {db}.user_resource_rollups_monthly FINAL WHERE sessions > 0)
     GROUP BY month, ${USER_RESOURCE_KEYS} ORDER BY month, ${USER_RESOURCE_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions of `days` (the rolled-up days). */
async function userMonthsFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toStartOfMonth(toDate(start_time))) AS month, ${USER_RESOURCE_KEYS},
            count() AS sessions,
            arraySlice(arraySort(groupUniqArray(native_username)), 1, 3) AS native_users,
            toString(min(start_time)) AS first_start, toString(max(start_time)) AS last_start
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY month, ${USER_RESOURCE_KEYS} ORDER BY month, ${USER_RESOURCE_KEYS}`,
    { days },
  );
}

/** The keys of the end-user rollup after its day. */
const END_USER_KEYS =
  "user_key, resource_name, resource_technology, connector_name, user_groups";

/** The end-user rollup's summary per day and key: sessions naming an end user, and those people. */
async function endUsersFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, ${END_USER_KEYS}, sum(sessions) AS sessions,
            uniqMerge(end_users) AS end_users
     FROM (SELECT * FROM {db}.end_user_rollups_daily FINAL WHERE sessions > 0)
     GROUP BY day, ${END_USER_KEYS} ORDER BY day, ${END_USER_KEYS}`,
  );
}

/** The same straight from the deduplicated sessions. */
async function endUsersFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day, ${END_USER_KEYS}, count() AS sessions,
            uniqIf(end_user_email, end_user_email != '') AS end_users
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
       AND (end_user_email != '' OR end_user_name != '')
     GROUP BY day, ${END_USER_KEYS} ORDER BY day, ${END_USER_KEYS}`,
    { days },
  );
}

/** The half-hourly per-user-type rollup's summary per day, half hour and user type. */
async function userTypesFromRollups() {
  return select(
    w,
    `SELECT toString(day) AS day, toString(half_hour) AS half_hour, user_type,
            sum(sessions) AS sessions
     FROM (SELECT * FROM {db}.user_type_rollups_half_hourly FINAL WHERE sessions > 0)
     GROUP BY day, half_hour, user_type ORDER BY day, half_hour, user_type`,
  );
}

/** The same straight from the deduplicated sessions. */
async function userTypesFromSessions(days: readonly string[]) {
  return select(
    w,
    `SELECT toString(toDate(start_time)) AS day,
            toString(toStartOfInterval(toDateTime(start_time), INTERVAL 30 minute)) AS half_hour,
            user_type, count() AS sessions
     FROM {db}.sessions FINAL
     WHERE toString(toDate(start_time)) IN {days:Array(String)}
     GROUP BY day, half_hour, user_type ORDER BY day, half_hour, user_type`,
    { days },
  );
}

/** The rollups equal the summaries of `days` from sessions FINAL. */
async function expectRolledUp(days: readonly string[]) {
  expect(await fromRollups()).toEqual(await fromSessions(days));
  expect(await technologyFromRollups()).toEqual(
    await technologyFromSessions(days),
  );
  const groups = await groupsFromRollups();
  expect(groups.length).toBeGreaterThan(0);
  expect(groups).toEqual(await groupsFromSessions(days));
  const addresses = await addressesFromRollups();
  expect(addresses.map((a) => a.client_ip_address)).toEqual(
    expect.arrayContaining(["10.1.0.1", "10.1.0.2"]),
  );
  expect(addresses).toEqual(await addressesFromSessions(days));
  const machines = await machinesFromRollups();
  expect(machines.length).toBeGreaterThan(0);
  expect(machines).toEqual(await machinesFromSessions(days));
  const machineResources = await machineResourcesFromRollups();
  expect(machineResources.length).toBeGreaterThan(0);
  expect(machineResources).toEqual(await machineResourcesFromSessions(days));
  const addressMonths = await addressMonthsFromRollups();
  expect(addressMonths.length).toBeGreaterThan(0);
  expect(addressMonths).toEqual(await addressMonthsFromSessions(days));
  const groupMonths = await groupMonthsFromRollups();
  expect(groupMonths.length).toBeGreaterThan(0);
  expect(groupMonths).toEqual(await groupMonthsFromSessions(days));
  const users = await usersFromRollups();
  expect(users.length).toBeGreaterThan(0);
  expect(users).toEqual(await usersFromSessions(days));
  const userMonths = await userMonthsFromRollups();
  expect(userMonths.length).toBeGreaterThan(0);
  expect(userMonths).toEqual(await userMonthsFromSessions(days));
  const endUsers = await endUsersFromRollups();
  expect(endUsers.length).toBeGreaterThan(0);
  expect(endUsers).toEqual(await endUsersFromSessions(days));
  const userTypes = await userTypesFromRollups();
  expect(userTypes.length).toBeGreaterThan(0);
  expect(userTypes).toEqual(await userTypesFromSessions(days));
  const months = await monthsFromRollups();
  expect(months.users.length).toBeGreaterThan(0);
  expect(months).toEqual(await monthsFromSessions(days));
  const parents = await parentsFromRollups();
  expect(parents.length).toBeGreaterThan(0);
  expect(parents).toEqual(await parentsFromSessions(days));
  await expectPeopleRolledUp(days);
}

/** The INSERT statements of migration `version`, rendered for this database. */
function migrationInserts(version: number): string[] {
  const file = readMigrations().find((m) => m.version === version);
  return renderSql(file?.text ?? "", { db: w.database }).filter((s) =>
    s.startsWith("INSERT"),
  );
}

/** Empties `table`, then runs the one INSERT of migration `version` into it. */
async function refill(table: string, version: number): Promise<void> {
  await w.client.command({
    query: `TRUNCATE TABLE \`${w.database}\`.${table}`,
  });
  const [count] = await select<{ n: string }>(
    w,
    `SELECT count() AS n FROM {db}.${table}`,
  );
  expect(Number(count?.n)).toBe(0);
  const fill = migrationInserts(version).filter((q) =>
    new RegExp(`^INSERT INTO \\S+\\.${table}\\b`).test(q),
  );
  expect(fill).toHaveLength(1);
  for (const query of fill) await w.client.command({ query });
}

/** A day's sessions: several people, resources and statuses, children, varied durations. */
function dayOf(dayIndex: number, n: number): Spec[] {
  const base = D1 + dayIndex * DAY;
  return Array.from({ length: n }, (_, i) => ({
    id: `s${dayIndex}_${i}`,
    startMs: base + 3_600_000 + i * 97_000,
    status: "completed",
    user: ["alice", "bob", "carol"][i % 3] as string,
    resource: ["orders", "billing"][i % 2] as string,
    technology: i % 2 === 0 ? "postgres" : "snowflake",
    connector: i % 5 === 0 ? "edge-2" : "edge-1",
    durationS: 10 + ((i * 37) % 500),
    ...(i % 7 === 3 ? { parent: `s${dayIndex}_0` } : {}),
    ...endUserOf(i),
  }));
}

/** The machine account's sessions acting for a person: some with an email, some a name only. */
function endUserOf(i: number): Pick<Spec, "endUser"> {
  if (i % 3 !== 2 || i % 4 === 0 || i % 4 === 2) return {};
  const n = (i >> 2) % 3;
  return i % 4 === 1
    ? { endUser: { email: `person${n}@acme.example`, name: `Person ${n}` } }
    : { endUser: { email: "", name: `Person ${n}` } };
}

describe("daily rollups", () => {
  const days = ["2026-10-01", "2026-10-02", "2026-10-03"];
  const open: Spec = {
    id: "long_1",
    startMs: D1 + DAY + 20 * 3_600_000,
    status: "active",
    user: "dave",
    resource: "orders",
  };

  it("rolls up settled days, waits for a day with an open session, and counts each session once", async () => {
    const t1 = D1 + 3 * DAY + 600_000;
    await store([...dayOf(0, 40), ...dayOf(1, 30), ...dayOf(2, 50)], t1);
    await store([open], t1);
    // The same reads again (a re-read of the lookback): no session may count twice.
    await store([...dayOf(0, 40), ...dayOf(2, 50)], t1 + 60_000);

    const nowMs = D1 + 4 * DAY + 3_600_000;
    const first = await rollUp({ config, warehouse: w, logger }, nowMs);
    expect(first).toMatchObject({ sessionDays: 2, unsettledDays: 1 });
    expect(first.sessions).toBe(90);
    await expectRolledUp(["2026-10-01", "2026-10-03"]);

    // Nothing changed: nothing is computed again.
    const again = await rollUp({ config, warehouse: w, logger }, nowMs);
    expect(again).toMatchObject({ sessionDays: 0, unsettledDays: 1 });
  });

  it("computes the day once its open session completes, and again when a late session arrives", async () => {
    const t2 = D1 + 4 * DAY + 7_200_000;
    await store([{ ...open, status: "completed", durationS: 3 * 3600 }], t2);
    const late: Spec = {
      id: "late_1",
      startMs: D1 + 2 * 3_600_000,
      status: "completed",
      user: "erin",
      resource: "billing",
      durationS: 42,
    };
    await store([late], t2 + 1000);

    const nowMs = D1 + 4 * DAY + 10_800_000;
    const r = await rollUp({ config, warehouse: w, logger }, nowMs);
    expect(r).toMatchObject({ sessionDays: 2, unsettledDays: 0 });
    const rolled = await fromRollups();
    expect(rolled).toEqual(await fromSessions(days));
    await expectRolledUp(days);
    const total = rolled.reduce((n, row) => n + Number(row.sessions), 0);
    expect(total).toBe(40 + 30 + 50 + 1 + 1);
    const [ids] = await select<{ n: string }>(
      w,
      "SELECT uniqExact(id) AS n FROM {db}.sessions",
    );
    expect(total).toBe(Number(ids?.n));
  });

  it("rolls up a day with a session still open once the bound passes, and supersedes its key when it completes", async () => {
    const day = "2026-10-05";
    const stuck: Spec = {
      id: "stuck_1",
      startMs: Date.parse(`${day}T08:00:00Z`),
      status: "idle",
      user: "frank",
      resource: "orders",
      groups: ["night-shift"],
    };
    const t3 = Date.parse("2026-10-06T00:10:00Z");
    await store([...dayOf(4, 12), stuck], t3);
    // Eight days later the day is settled by the bound, with the session as it was last read.
    const later = Date.parse("2026-10-14T00:00:00Z");
    const r = await rollUp({ config, warehouse: w, logger }, later);
    expect(r).toMatchObject({ sessionDays: 1, unsettledDays: 0 });
    await expectRolledUp([...days, day]);

    expect(
      (await groupsFromRollups()).filter((g) => g.day === day),
    ).toContainEqual(expect.objectContaining({ user_group: "night-shift" }));
    // Completed, its user now in another group: the day's night-shift key is superseded.
    await store(
      [
        {
          ...stuck,
          status: "completed",
          durationS: 100,
          groups: ["day-shift"],
        },
      ],
      later + 60_000,
    );
    await rollUp({ config, warehouse: w, logger }, later + 120_000);
    const rolled = await fromRollups();
    expect(rolled).toEqual(await fromSessions([...days, day]));
    await expectRolledUp([...days, day]);
    expect(
      rolled.filter((row) => row.user_key === "frank@acme.example"),
    ).toEqual([
      expect.objectContaining({ session_status: "completed", sessions: 1 }),
    ]);
    const shifts = (await groupsFromRollups()).filter((g) =>
      String(g.user_group).endsWith("-shift"),
    );
    expect(shifts).toEqual([
      expect.objectContaining({ day, user_group: "day-shift", sessions: 1 }),
    ]);
  });

  it("computes every rolled-up day again after migration 0020, listing it as rolled up meanwhile", async () => {
    const listed = async () =>
      (
        await select<{ day: string }>(
          w,
          "SELECT toString(day) AS day FROM {db}.rollup_days FINAL WHERE source = 'sessions' ORDER BY day",
        )
      ).map((r) => r.day);
    const before = await listed();
    expect(before).toEqual([...days, "2026-10-05"]);
    // The statement of 0020 that marks the days rolled up before its columns existed.
    const marks = migrationInserts(20);
    expect(marks).toHaveLength(1);
    for (const query of marks) await w.client.command({ query });
    expect(await listed()).toEqual(before);
    const r = await rollUp(
      { config, warehouse: w, logger },
      Date.parse("2026-10-14T01:00:00Z"),
    );
    expect(r.sessionDays).toBe(before.length);
    await expectRolledUp(before);
  });

  it("migration 0021 fills the per-technology rollup of the days rolled up before it", async () => {
    await refill("session_technology_rollups_daily", 21);
    const days = (
      await select<{ day: string }>(
        w,
        "SELECT DISTINCT toString(day) AS day FROM {db}.session_rollups_daily FINAL WHERE sessions > 0 ORDER BY day",
      )
    ).map((r) => r.day);
    // The t-digest is merged from the finer states here: compare the exact measures.
    const exact = (rows: Record<string, unknown>[]) =>
      rows.map(({ td: _td, ...rest }) => rest);
    expect(exact(await technologyFromRollups())).toEqual(
      exact(await technologyFromSessions(days)),
    );
  });

  it("migration 0038 fills the per-group rollup of the days rolled up before it", async () => {
    const want = await groupsFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("group_resource_rollups_daily", 38);
    expect(await groupsFromRollups()).toEqual(want);
  });

  it("migration 0044 fills the per-address rollups of the days rolled up before it", async () => {
    const want = await addressesFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("client_ip_rollups_daily", 44);
    expect(await addressesFromRollups()).toEqual(want);
    const machines = await machinesFromRollups();
    expect(machines.length).toBeGreaterThan(0);
    await refill("machine_address_rollups_daily", 44);
    expect(await machinesFromRollups()).toEqual(machines);
  });

  it("rolls up the people behind a day's sessions: brand members, and the person a native user's identity link names", async () => {
    const day = "2026-10-07";
    const at = (hour: number) =>
      Date.parse(`${day}T${String(hour).padStart(2, "0")}:00:00Z`);
    const one = (id: string, hour: number, more: Partial<Spec>): Spec => ({
      id,
      startMs: at(hour),
      status: "completed",
      user: "alice",
      resource: "orders",
      durationS: 60,
      ...more,
    });
    // app_rw is linked to Zoe from 10:00: its 08:00 session has no person, its later ones Zoe.
    await w.client.command({
      query: `INSERT INTO {db:Identifier}.native_user_identity_links_history
          (id, valid_from, resource_id, native_username, identity_type, identity_id, user_email,
           user_full_name, is_deleted, version)
        VALUES ('lnk_zoe', '${day} 10:00:00', 'res_orders', 'app_rw', 'user', 'usr_zoe',
                'zoe@acme.example', 'Zoe', 0, 1)`,
      query_params: { db: config.clickhouse.database },
    });
    await store(
      [
        one("p1", 8, { user: "svc", native: "app_rw" }),
        one("p2", 11, { user: "svc", native: "app_rw" }),
        one("p3", 12, { user: "svc", native: "app_rw" }),
        one("p4", 13, { user: "svc", native: "app_ro", resource: "billing" }),
        one("p5", 9, { user: "bob", technology: "llm", resource: "gpt" }),
        one("p6", 14, { technology: "llm", resource: "gpt" }),
        one("p7", 15, { technology: "mcp", resource: "tools" }),
      ],
      at(16),
    );
    const later = Date.parse("2026-10-14T02:00:00Z");
    await rollUp({ config, warehouse: w, logger }, later);
    await expectRolledUp([...days, "2026-10-05", day]);
    expect(
      (await technologyPairsFromRollups()).map((p) => p.resource_technology),
    ).toEqual(["llm", "llm", "mcp"]);
    expect(await nativeFromRollups()).toEqual([
      expect.objectContaining({
        native_username: "app_ro",
        person_via: "none",
        sessions: 1,
      }),
      expect.objectContaining({
        native_username: "app_rw",
        person_via: "link_user",
        person_email: "zoe@acme.example",
        sessions: 2,
      }),
      expect.objectContaining({
        native_username: "app_rw",
        person_via: "none",
        sessions: 1,
      }),
    ]);
    // orders that day: app_rw's three sessions, two of them Zoe's, one nobody's: one person.
    expect(
      (await resourcePeopleFromRollups()).filter(
        (x) => x.day === day && x.resource_name === "orders",
      ),
    ).toEqual([expect.objectContaining({ sessions: 3, persons: 1 })]);
  });

  it("migration 0046 fills the people rollups of the days rolled up before it", async () => {
    const tables: [string, () => Promise<Record<string, unknown>[]>][] = [
      ["resource_people_rollups_daily", resourcePeopleFromRollups],
      ["native_user_rollups_daily", nativeFromRollups],
      ["technology_pair_rollups_daily", technologyPairsFromRollups],
    ];
    for (const [table, rolled] of tables) {
      const want = await rolled();
      expect(want.length, table).toBeGreaterThan(0);
      await refill(table, 46);
      expect(await rolled(), table).toEqual(want);
    }
  });

  it("migration 0045 fills the per-person-and-resource rollup of the days rolled up before it", async () => {
    const want = await usersFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("user_resource_rollups_daily", 45);
    expect(await usersFromRollups()).toEqual(want);
  });

  // After every test whose rollUp runs on a clock before now: the migration stamps its rows now.
  it("migration 0047 fills the monthly rollups and the per-parent rollup of the days rolled up before it", async () => {
    const want = await monthsFromRollups();
    expect(want.users.length).toBeGreaterThan(0);
    expect(want.resources.length).toBeGreaterThan(0);
    await refill("user_rollups_monthly", 47);
    await refill("resource_rollups_monthly", 47);
    await refill("technology_rollups_monthly", 47);
    expect(await monthsFromRollups()).toEqual(want);
    const parents = await parentsFromRollups();
    expect(parents.length).toBeGreaterThan(0);
    await refill("child_session_rollups_daily", 47);
    expect(await parentsFromRollups()).toEqual(parents);
  });

  it("migration 0048 fills the per-machine-account-and-resource rollup and the monthly per-address rollup of the days rolled up before it", async () => {
    const want = await machineResourcesFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("machine_resource_rollups_daily", 48);
    expect(await machineResourcesFromRollups()).toEqual(want);
    const months = await addressMonthsFromRollups();
    expect(months.length).toBeGreaterThan(0);
    await refill("client_ip_rollups_monthly", 48);
    expect(await addressMonthsFromRollups()).toEqual(months);
  });

  it("migration 0051 fills the end-user and the half-hourly per-user-type rollups of the days rolled up before it", async () => {
    const want = await endUsersFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("end_user_rollups_daily", 51);
    expect(await endUsersFromRollups()).toEqual(want);
    const userTypes = await userTypesFromRollups();
    expect(userTypes.length).toBeGreaterThan(0);
    await refill("user_type_rollups_half_hourly", 51);
    expect(await userTypesFromRollups()).toEqual(userTypes);
  });

  it("migration 0049 fills the monthly per-group-and-resource rollup of the days rolled up before it", async () => {
    const want = await groupMonthsFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("group_resource_rollups_monthly", 49);
    expect(await groupMonthsFromRollups()).toEqual(want);
  });

  it("migration 0050 fills the monthly per-person-and-resource rollup of the days rolled up before it", async () => {
    const want = await userMonthsFromRollups();
    expect(want.length).toBeGreaterThan(0);
    await refill("user_resource_rollups_monthly", 50);
    expect(await userMonthsFromRollups()).toEqual(want);
  });
});

describe("the data-label rollup", () => {
  it("counts a job's labels per day, and supersedes a label its day no longer has", async () => {
    const day = "2026-09-10";
    // The job's label counts of the day, read (fetched) at `fetched`: each label's windows.
    const histogram = (fetched: string, counts: Record<string, number>) =>
      w.client.command({
        query: `INSERT INTO {db:Identifier}.agg_histogram (job, bucket_time, interval_s, level, field1, key1, count, window_start, fetched_at)
          SELECT 'labels', toDateTime('${day} 00:00:00', 'UTC') + number * 3600, 3600, 1,
                 'response.returned_columns.data_label', label, n, toDateTime('${day} 00:00:00', 'UTC'),
                 toDateTime64('${fetched}', 3, 'UTC')
          FROM (SELECT arrayJoin([${Object.entries(counts)
            .map(([l, n]) => `('${l}', ${n})`)
            .join(", ")}]) AS e, e.1 AS label, e.2 AS n) AS l,
               numbers(2) AS w`,
        query_params: { db: config.clickhouse.database },
      });
    const rolledUp = () =>
      select<{ data_label: string; n: string }>(
        w,
        `SELECT data_label, toString(count) AS n FROM {db}.data_label_rollups_daily FINAL
         WHERE job = 'labels' AND day = '${day}' AND count > 0 ORDER BY data_label`,
      );
    const compute = (fetched: string, atMs: number) =>
      computeDataLabelRollups(
        w,
        "labels",
        [{ day, fetchedMax: fetched }],
        atMs,
      );

    await histogram("2026-09-11 00:00:00", { email: 3, iban: 5 });
    await compute("2026-09-11 00:00:00", Date.parse("2026-09-11T01:00:00Z"));
    expect(await rolledUp()).toEqual([
      { data_label: "email", n: "6" },
      { data_label: "iban", n: "10" },
    ]);

    // Read again: iban's windows now count 0, email's 4.
    await histogram("2026-09-12 00:00:00", { email: 4, iban: 0 });
    await compute("2026-09-12 00:00:00", Date.parse("2026-09-12T01:00:00Z"));
    expect(await rolledUp()).toEqual([{ data_label: "email", n: "8" }]);
  });
});

describe("the hold flags at the rollups", () => {
  it("follow 60,000 active holds, their values more than a URL holds", async () => {
    const ownConfig = await testConfig();
    const own = await migratedWarehouse(ownConfig);
    try {
      // Session holds of 10-character ids: quoted in a URL, more than a server's request line
      // (in a request body, less than the HTTP front's limit on a statement).
      await own.client.command({
        query: `INSERT INTO \`${own.database}\`.legal_holds
            (hold_id, scope, value, reason, created_by, created_at, updated_at)
          SELECT concat('hold_', toString(number)), 'session',
            if(number = 0, 'held_1', concat('gone_', leftPad(toString(number), 5, '0'))),
            'audit', 'tests', now64(3, 'UTC'), now64(3, 'UTC')
          FROM numbers(60000)`,
      });
      const fetched = D1 + 3 * DAY;
      const spec = { startMs: D1, status: "completed", user: "erin" };
      await insertRows(
        own,
        "sessions",
        [
          { ...spec, id: "held_1", resource: "orders" },
          { ...spec, id: "free_1", resource: "billing" },
        ].map((x) => {
          const { s, raw } = session(x);
          return sessionRow(s, raw, fetched);
        }),
        { retries: 0 },
      );
      const r = await rollUp(
        { config: ownConfig, warehouse: own, logger },
        fetched,
      );
      expect(r.holdRowsChanged).toBe(1);
      expect(
        await select(
          own,
          "SELECT id, legal_hold FROM {db}.sessions FINAL ORDER BY id",
        ),
      ).toEqual([
        { id: "free_1", legal_hold: false },
        { id: "held_1", legal_hold: true },
      ]);
    } finally {
      await own.close();
    }
  });
});

describe("the session keys at the rollups", () => {
  /** `n` sessions `bulk-<from…>` stored under `start`, read at `fetched` with `version`. */
  const store = (
    into: Warehouse,
    o: {
      from: number;
      n: number;
      start: string;
      fetched: string;
      version: number;
    },
  ) =>
    into.client.command({
      query: `INSERT INTO \`${into.database}\`.sessions (id, start_time, session_status, fetched_at, version)
        SELECT concat('bulk-', leftPad(toString(${o.from} + number), 6, '0')),
          toDateTime64('${o.start}', 3, 'UTC'), 'completed', toDateTime64('${o.fetched}', 3, 'UTC'), ${o.version}
        FROM numbers(${o.n})`,
    });
  const tombstones = (into: Warehouse) =>
    select(
      into,
      "SELECT id, toString(start_time) AS start FROM {db}.sessions WHERE is_deleted = 1 ORDER BY id, start",
    );
  const granules = async (into: Warehouse, where: string) => {
    const plan = await select<{ explain: string }>(
      into,
      `EXPLAIN indexes = 1 SELECT id FROM {db}.session_keys ${where}`,
    );
    const text = plan.map((r) => r.explain).join("\n");
    return [...text.matchAll(/Granules: (\d+)\/\d+/g)]
      .map((m) => Number(m[1]))
      .pop();
  };

  it("a pass reads the keys stored since the last and retires the same keys as a scan of every key", async () => {
    // The same data in two databases: one judged by the rollups, one by a scan of every key.
    const passes = await migratedWarehouse(await testConfig());
    const scans = await migratedWarehouse(await testConfig());
    try {
      const both = async (f: (into: Warehouse) => Promise<unknown>) => {
        await f(passes);
        await f(scans);
      };
      // Long ago: 20,000 sessions, 500 of them read again under another start.
      const longAgo = "2026-01-10 12:00:00";
      await both((x) =>
        store(x, {
          from: 0,
          n: 20_000,
          start: "2026-01-10 09:00:00",
          fetched: longAgo,
          version: 1,
        }),
      );
      await both((x) =>
        store(x, {
          from: 0,
          n: 500,
          start: "2026-01-10 08:00:00",
          fetched: "2026-01-11 12:00:00",
          version: 2,
        }),
      );
      const pass = async () =>
        (await rollUp({ config, warehouse: passes, logger })).keysRetired;
      expect(await pass()).toBe(500);
      expect(await retireSupersededKeys(scans)).toBe(500);
      const judged = await readCheckpoint(passes, ROLLUPS_KEYS_STREAM);
      expect(judged).toBeDefined();

      // Recently: 300 of the others read again under another start.
      const now = chTime(Date.now() + 1000);
      await both((x) =>
        store(x, {
          from: 1000,
          n: 300,
          start: "2026-01-10 07:00:00",
          fetched: now,
          version: 3,
        }),
      );
      expect(await pass()).toBe(300);
      expect(await retireSupersededKeys(scans)).toBe(300);
      expect(await tombstones(passes)).toEqual(await tombstones(scans));
      // Nothing left that a scan of every key would retire.
      expect(await retireSupersededKeys(passes)).toBe(0);

      // The pass read the keys fetched since the last pass: fewer granules than every key.
      const since = `WHERE fetched_at >= '${chTime(judged?.positionMs ?? 0)}'`;
      const bounded = await granules(passes, since);
      const every = await granules(passes, "");
      expect(bounded).toBeLessThan(every ?? 0);
    } finally {
      await passes.close();
      await scans.close();
    }
  });
});
