// The sessions of a report's period, one row per session with the person behind it: from the
// `sessions_enriched` view when the control-plane streams are exported (the e-mail of the human
// behind machine and native users, the group a native user is linked to, else the user key),
// otherwise the `user_key` the dashboards group by (e-mail of a human, user name of a machine).
// With the view, only the sessions whose person comes through an identity link are read through
// it (enrichedSessions). Parameters: {from}, {to}, and the filters {user}, {resource},
// {environment} ('' = all).
import { LONG_RANGE_DAYS, SESSIONS_ROLLUP_SOURCE } from "../rollups.js";
import type { ReportQuery } from "./query.js";

/** Native user names that act with an administrator's rights on most systems. */
const PRIVILEGED =
  "match(lower(native_username), '^(root|admin|administrator|postgres|sa|sys|system|dba|superuser|rdsadmin|master)$|admin')";

const FILTERS = `({user:String} = '' OR user_key = {user:String} OR person = {user:String})
  AND ({resource:String} = '' OR resource_name = {resource:String})
  AND ({environment:String} = '' OR environment = {environment:String})`;

const ENVIRONMENT = `ifNull(e.environment, '')`;

/**
 * The number of distinct values of a String column, as the number of distinct 64-bit SipHash
 * values: eight bytes a value in the engine's set where uniqExact of the string keeps sixteen
 * (its own 128-bit hash). The two counts differ only when two of the values share a hash: at
 * 50,000 people the odds are about 1 in 10^10. Over the 10M organisation year the per-day
 * people and systems of the access review peaked at 1,259 MiB with uniqExact of the strings,
 * 665 MiB this way, the same bytes out.
 */
const distinct = (column: string) => `uniqExact(sipHash64(${column}))`;

/** The aggregate state of `distinct`, for counts merged from several sources. */
const distinctState = (column: string) =>
  `uniqExactState(sipHash64(${column}))`;

/**
 * A session's person, its name and how it was found (`person`, `pname`, `via`), from the view's
 * person columns: the e-mail, else for a person found through an identity link its name, else
 * the user key. Each branch of enrichedSessions computes them itself, so that a brand member's
 * (user_id or end_user_id set: the end user, else the user) is read from `sessions` alone, and
 * never tests a link it cannot have: the view's identity-link join never changes those columns,
 * and its joins cost more than the read (over the 1M organisation year 0.71 s of CPU against
 * 1.00 s); over the 10M organisation year, _Systems reached per person_ took 19.7 s of CPU this
 * way, 20.7 to 21.0 s with the person's test after the union, the same bytes out. Held equal to
 * the view's by test/integration/reports/session-person.test.ts.
 */
const BRAND_PERSON = `if(if(end_user_id != '', end_user_email, user_email) AS brand_email != '', brand_email, user_key) AS person,
           if(if(end_user_id != '', end_user_name, user_name) AS brand_name != '', brand_name, user_name) AS pname,
           'brand' AS via`;

/** The same three columns from sessions_enriched's person columns (BRAND_PERSON). */
const LINKED_PERSON = `multiIf(person_email != '', person_email, person_via != 'brand' AND person_name != '', person_name, user_key) AS person,
           if(person_name != '', person_name, user_name) AS pname, toString(person_via) AS via`;

const SESSION_COLUMNS =
  "id, start_time, user_key, user_type, resource_id, resource_name, resource_technology, native_username, user_name";

/**
 * The sessions of a range with their person (BRAND_PERSON): brand members' from `sessions`, the
 * others' (a native user's person, through its identity link at the session's start) from
 * `sessions_enriched`. No data labels: a table that shows them joins RESOURCE_LABELS.
 */
function enrichedSessions(range: string): string {
  return `(
    SELECT ${SESSION_COLUMNS}, ${BRAND_PERSON}
    FROM {{db}}.sessions FINAL
    WHERE ${range} AND (user_id != '' OR end_user_id != '')
    UNION ALL
    SELECT ${SESSION_COLUMNS}, ${LINKED_PERSON}
    FROM {{db}}.sessions_enriched
    WHERE ${range} AND user_id = '' AND end_user_id = ''
  )`;
}

function periodSessions(
  source: "enriched" | "plain",
  range: "period" | "previous",
): string {
  const [lo, hi] =
    range === "period" ? ["from", "to"] : ["previousFrom", "from"];
  const inRange = (t: string) =>
    `${t}start_time >= {${lo}:DateTime64(3, 'UTC')} AND ${t}start_time < {${hi}:DateTime64(3, 'UTC')}`;
  const person =
    source === "enriched"
      ? "s.person AS person, s.pname AS person_name, s.via AS via"
      : `s.user_key AS person, s.user_name AS person_name, 'none' AS via`;
  const table =
    source === "enriched"
      ? `${enrichedSessions(inRange(""))} AS s`
      : "{{db}}.sessions AS s FINAL";
  return `SELECT * FROM (
  SELECT s.id AS id, s.start_time AS start_time, s.user_key AS user_key, s.user_type AS user_type,
       s.resource_id AS resource_id, s.resource_name AS resource_name, s.resource_technology AS resource_technology,
       s.native_username AS native_username, ${ENVIRONMENT} AS environment,
       ${person}
  FROM ${table}
  LEFT JOIN {{db}}.resource_environments AS e ON e.resource_name = s.resource_name${
    source === "plain"
      ? `
  WHERE ${inRange("s.")}`
      : ""
  }
) WHERE ${FILTERS}`;
}

/**
 * The data labels of each resource as sessions_enriched gives them with its sessions (its
 * inventory join, once per resource rather than once per session).
 */
export const RESOURCE_LABELS = `(SELECT resource_id, arraySort(groupUniqArrayArray(data_labels)) AS labels
    FROM {{db}}.inventory_columns FINAL GROUP BY resource_id)`;

/**
 * The distinct sets of data labels of the resources (each as RESOURCE_LABELS gives it), as one
 * array. A table that gathers the labels of many sessions gathers the index of each session's
 * set in it (RESOURCE_LABEL_SETS: a number to hash, not an array) and looks the sets up once
 * per row it returns: over the 10M organisation year _Access per person_ took 9.7 s of CPU this
 * way, 13.7 s gathering the arrays, the same bytes out.
 */
const LABEL_SETS = `(SELECT groupArray(labels) FROM (SELECT DISTINCT labels FROM ${RESOURCE_LABELS}))`;

/** Each resource's set of data labels as its index in `label_sets` (LABEL_SETS). */
const RESOURCE_LABEL_SETS = `(SELECT resource_id, indexOf(label_sets, labels) AS label_set FROM ${RESOURCE_LABELS})`;

export type SessionSource = "enriched" | "plain";

/**
 * The tables the sessions of a source are read from (sessions_enriched reads sessions and
 * inventory_columns, which the enriched source also reads directly).
 */
export function sessionNeeds(source: SessionSource): string[] {
  return source === "enriched"
    ? ["sessions_enriched", "resource_environments"]
    : ["sessions", "resource_environments"];
}

export function accessQueries(source: SessionSource) {
  const needs = sessionNeeds(source);
  const cur = periodSessions(source, "period");
  const prev = periodSessions(source, "previous");
  const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;
  return {
    perPerson: {
      id: "access.per_person",
      needs,
      // The labels joined once per resource (RESOURCE_LABEL_SETS) and the index of each
      // distinct set of them kept once per person: the view's labels, gathered on every
      // session, cost 0.7 s of CPU over the 1M organisation year. A session on a resource
      // without labels has index 0, whose element is the empty set.
      sql: `${source === "enriched" ? `WITH ${LABEL_SETS} AS label_sets\n` : ""}SELECT person, any(person_name) AS name, any(via) AS via,
       arrayStringConcat(arraySort(groupUniqArray(user_key)), ', ') AS accounts,
       ${distinct("resource_name")} AS systems, count() AS sessions,
       ${T("min(start_time)")} AS first_access, ${T("max(start_time)")} AS last_access,
       countIf(startsWith(lower(environment), 'prod')) AS production_sessions,
       countIf(${PRIVILEGED}) AS privileged_sessions,
       ${
         source === "enriched"
           ? "arrayStringConcat(arraySort(arrayDistinct(arrayFlatten(arrayMap(i -> label_sets[i], groupUniqArray(l.label_set))))), ', ')"
           : "''"
       } AS data_labels
FROM (${cur}) AS c${
        source === "enriched"
          ? `\nLEFT JOIN ${RESOURCE_LABEL_SETS} AS l ON l.resource_id = c.resource_id`
          : ""
      }
GROUP BY person
ORDER BY sessions DESC, person`,
    },
    perPersonSystem: {
      id: "access.per_person_system",
      needs,
      // One row per pair and native user first, then the pair: with a set of native users kept
      // for every pair while the pairs were counted, this query over a year of 100 million
      // sessions (4.65 million pairs) peaked at 5,345 MiB of RSS; this way, at 2,640 MiB.
      // `new`: the pair has no session in the period of the same length before it (the pairs
      // of _New access since the previous period_, taken from these rows as they are read).
      // `privileged_native_users`: the pair's native users that are privileged or on a
      // production resource, by name, each (native user, privileged, production, sessions,
      // last access): the rows of _Privileged or production access_, taken from these rows as
      // they are read (a read and grouping of the period fewer).
      // The environment is a key of the inner grouping rather than an any() of it: it is the
      // resource's (joined by name), so the groups are the same, and a key costs less than a
      // string kept in every group's state (over the 10M organisation year 21.1 s of CPU
      // against 22.6 s, the same bytes out).
      sql: `SELECT person, system, any(technology) AS technology, any(environment) AS environment,
       sum(n) AS sessions, ${T("min(first)")} AS first_access, ${T("max(last)")} AS last_access,
       arrayStringConcat(arraySort(groupArray(native_username)), ', ') AS native_users,
       arraySort(x -> x.1, groupArrayIf((native_username, privileged, production, n, ${T("last")}),
         privileged OR production)) AS privileged_native_users,
       (person, system) NOT IN (SELECT person, resource_name FROM (${prev})) AS new
FROM (
  SELECT person, resource_name AS system, native_username, any(resource_technology) AS technology,
         environment, count() AS n, min(start_time) AS first, max(start_time) AS last,
         ${PRIVILEGED} AS privileged, startsWith(lower(environment), 'prod') AS production
  FROM (${cur})
  GROUP BY person, resource_name, native_username, environment
)
GROUP BY person, system
ORDER BY person, system`,
    },
    totalsAndDays: {
      id: "access.totals_and_sessions_per_day",
      needs,
      // One read of the period for page one's totals (the row of the whole period, first) and
      // the sessions per day (a row a day after it, at most a row a day: held).
      sql: `SELECT grouping(d) = 1 AS whole_period, if(whole_period, '', formatDateTime(d, '%Y-%m-%d')) AS day,
       count() AS sessions, ${distinct("person")} AS people, ${distinct("resource_name")} AS systems,
       countIf(startsWith(lower(environment), 'prod')) AS production_sessions,
       countIf(${PRIVILEGED}) AS privileged_sessions
FROM (SELECT *, toDate(start_time) AS d FROM (${cur}))
GROUP BY GROUPING SETS ((d), ())
ORDER BY whole_period DESC, d`,
    },
  } as const satisfies Record<string, ReportQuery>;
}

/**
 * The rolled-up days of a long period (longer than LONG_RANGE_DAYS, or starting before the raw
 * retention): days `rollup_days` lists that lie wholly inside [from, to); none otherwise.
 */
const ROLLED_UP_DAYS = `(SELECT day FROM {{db}}.rollup_days FINAL
  WHERE source = '${SESSIONS_ROLLUP_SOURCE}'
    AND (dateDiff('second', {from:DateTime64(3, 'UTC')}, {to:DateTime64(3, 'UTC')}) > ${LONG_RANGE_DAYS * 86_400}
      OR {from:DateTime64(3, 'UTC')} < now64(3) - toIntervalDay((
        SELECT if(argMax(retention_days, applied_at) = 0, 36500, argMax(retention_days, applied_at))
        FROM {{db}}.retention_settings WHERE table_name = 'sessions')))
    AND toDateTime64(day, 3, 'UTC') >= {from:DateTime64(3, 'UTC')}
    AND toDateTime64(day, 3, 'UTC') + INTERVAL 1 DAY <= {to:DateTime64(3, 'UTC')})`;

/** Every UTC day the period touches that is not a rolled-up day: what sessions answers. */
const RAW_DAYS = `(SELECT day FROM (
    SELECT arrayJoin(arrayMap(i -> toDate({from:DateTime64(3, 'UTC')}, 'UTC') + i,
      range(toUInt32(dateDiff('day', toDate({from:DateTime64(3, 'UTC')}, 'UTC'), toDate({to:DateTime64(3, 'UTC')}, 'UTC')) + 1)))) AS day)
  WHERE day NOT IN ${ROLLED_UP_DAYS})`;

const ROLLUP_NEEDS = [
  "session_rollups_daily",
  "rollup_days",
  "retention_settings",
];

/**
 * The sections the daily rollups can answer, with the person as the user key (the plain
 * source): the rolled-up days of a long period from `session_rollups_daily`, every other day
 * from `sessions`, so that the answer is the one `sessions` alone would give while its rows
 * are kept.
 */
export function rollupQueries() {
  const needs = [...sessionNeeds("plain"), ...ROLLUP_NEEDS];
  const raw = periodSessions("plain", "period");
  const rolled = `SELECT * FROM (
  SELECT r.day AS day, r.sessions AS sessions, r.user_key AS user_key, r.user_key AS person,
       r.resource_name AS resource_name, ${ENVIRONMENT} AS environment
  FROM {{db}}.session_rollups_daily AS r FINAL
  LEFT JOIN {{db}}.resource_environments AS e ON e.resource_name = r.resource_name
  WHERE r.day IN ${ROLLED_UP_DAYS} AND r.sessions > 0
) WHERE ${FILTERS}`;
  return {
    rolledUpDays: {
      id: "access.rolled_up_days",
      needs: ROLLUP_NEEDS,
      sql: `SELECT count() AS days, toString(min(day)) AS first, toString(max(day)) AS last FROM ${ROLLED_UP_DAYS}`,
    },
    sessionsPerDay: {
      id: "access.sessions_per_day_rollups",
      needs,
      sql: `SELECT formatDateTime(day, '%Y-%m-%d') AS day, sum(n) AS sessions, uniqExactMerge(p) AS people
FROM (
  SELECT toDate(start_time, 'UTC') AS day, count() AS n, ${distinctState("person")} AS p
  FROM (${raw})
  WHERE toDate(start_time, 'UTC') IN ${RAW_DAYS}
  GROUP BY day
  UNION ALL
  SELECT day, sum(sessions) AS n, ${distinctState("person")} AS p
  FROM (${rolled})
  GROUP BY day
)
GROUP BY day
ORDER BY day`,
    },
  } as const satisfies Record<string, ReportQuery>;
}

/** Sessions of the period as the sensitive-data report reads them (same person and filters). */
export function periodSessionsSql(source: SessionSource): string {
  return periodSessions(source, "period");
}

/** The aggregation job (first by name) whose logs are grouped by user.email and policy.name. */
const POLICY_USER_JOB = `(SELECT min(job) FROM {{db}}.agg_jobs FINAL
  WHERE has(group_by, 'user.email') AND has(group_by, 'policy.name'))`;

export const policyHitQueries = {
  job: {
    id: "access.policy_user_job",
    needs: ["agg_jobs"],
    sql: `SELECT ${POLICY_USER_JOB} AS job`,
  },
  perPerson: {
    id: "access.policy_hits_per_person",
    needs: ["agg_histogram", "agg_jobs"],
    sql: `SELECT person, policy, sum(count) AS hits,
       formatDateTime(min(bucket_time), '%Y-%m-%d %H:%i:%S') AS first_hit,
       formatDateTime(max(bucket_time), '%Y-%m-%d %H:%i:%S') AS last_hit
FROM (
  SELECT [h.key1, h.key2, h.key3][indexOf(j.group_by, 'user.email')] AS person,
         [h.key1, h.key2, h.key3][indexOf(j.group_by, 'policy.name')] AS policy,
         h.count AS count, h.bucket_time AS bucket_time
  FROM {{db}}.agg_histogram AS h FINAL
  INNER JOIN (SELECT job, group_by FROM {{db}}.agg_jobs FINAL WHERE job = ${POLICY_USER_JOB}) AS j ON j.job = h.job
  WHERE h.level = length(j.group_by) AND h.count > 0
    AND h.bucket_time >= {from:DateTime64(3, 'UTC')} AND h.bucket_time < {to:DateTime64(3, 'UTC')}
)
WHERE person NOT IN ('', 'none') AND policy NOT IN ('', 'none')
  AND ({user:String} = '' OR person = {user:String})
GROUP BY person, policy
ORDER BY person, policy`,
  },
} as const satisfies Record<string, ReportQuery>;

/**
 * The detections' hits whose activity is in the period (detection_hits), with the person and
 * resource of their session when there is one; the user and resource filters apply to those.
 * `alert`: paged (its rule pages and it is not history), signal (a hunting rule's hit) or
 * historical (its event was older than the age of history when it arrived, never paged).
 */
export const detectionHitsQuery = {
  id: "access.detection_hits",
  needs: ["detection_hits", "sessions"],
  sql: `SELECT formatDateTime(h.event_time, '%Y-%m-%d %H:%i:%S') AS event_time, h.rule_id AS rule,
       h.title AS title, h.severity AS severity, arrayStringConcat(h.attack, ', ') AS techniques,
       ifNull(s.user_key, '') AS person, ifNull(toString(s.resource_name), '') AS system, h.session_id AS session_id,
       multiIf(h.historical, 'historical', h.pages, 'paged', 'signal') AS alert
FROM {{db}}.detection_hits AS h FINAL
LEFT JOIN (
  SELECT id, user_key, resource_name FROM {{db}}.sessions FINAL
  WHERE id IN (SELECT session_id FROM {{db}}.detection_hits FINAL
               WHERE event_time >= {from:DateTime64(3, 'UTC')} AND event_time < {to:DateTime64(3, 'UTC')})
) AS s ON s.id = h.session_id
WHERE h.event_time >= {from:DateTime64(3, 'UTC')} AND h.event_time < {to:DateTime64(3, 'UTC')}
  AND ({user:String} = '' OR s.user_key = {user:String})
  AND ({resource:String} = '' OR s.resource_name = {resource:String})
ORDER BY h.event_time, h.rule_id, h.hit_key`,
} as const satisfies ReportQuery;
