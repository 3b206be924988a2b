// The access review's tables of sessions from one read of them: the sessions of the period and
// of the period of the same length before it are read once, grouped by every grouping set the
// tables need at once (GROUPING SETS, each group with counts, first and last times alone: no set
// of values held per group, which over millions of person-system groups is what costs memory),
// then what counts distinct values (systems, accounts, data labels, native users, people) is
// counted over those groups with window functions, and each table's rows come out as a part of
// the one result, one part after the other, each in its table's order. The tables equal the
// queries of each table alone (accessQueries, session-queries.ts), which
// test/integration/reports/one-read.test.ts holds.
// Parameters: {from}, {to}, {previousFrom}, and the filters {user}, {resource}, {environment}.
import type { ReportQuery } from "./query.js";
import {
  PRIVILEGED,
  SESSION_FILTERS,
  sessionNeeds,
  sessionsSql,
  type SessionSource,
} from "./session-queries.js";

/**
 * The parts of the one read, in the order they come: the period's totals (one row), then the
 * rows of each table. A part with no rows is absent.
 */
export const ACCESS_PARTS = {
  totals: 1,
  perPerson: 2,
  perPersonSystem: 3,
  newAccess: 4,
  privileged: 5,
  perDay: 6,
  /** The distinct users and end users (ids and e-mails) of the period's sessions, unfiltered. */
  activeAccounts: 7,
} as const;

/** The grouping keys, in the order of the mask `grouping(…)` gives (the first is the high bit). */
const KEYS = [
  "person",
  "resource_name",
  "k_environment",
  "native_username",
  "user_key",
  "data_labels",
  "d",
  "user_id",
  "end_user_id",
  "user_email",
  "end_user_email",
] as const;

type Key = (typeof KEYS)[number];

/** The grouping sets: the groups each table is made of. */
const SETS = {
  /** The whole period. */
  all: [],
  person: ["person"],
  pair: ["person", "resource_name"],
  /** A person, system, environment and native user: the finest group. */
  atom: ["person", "resource_name", "k_environment", "native_username"],
  account: ["person", "user_key"],
  labels: ["person", "data_labels"],
  day: ["d"],
  dayPerson: ["d", "person"],
  system: ["resource_name"],
  active: ["user_id", "end_user_id", "user_email", "end_user_email"],
} as const satisfies Record<string, readonly Key[]>;

type SetName = keyof typeof SETS;

/** The value of `grouping(KEYS)` in a row of a set: a bit set for each key not in it. */
function mask(set: SetName): number {
  const keys: readonly Key[] = SETS[set];
  return KEYS.reduce(
    (m, k, i) => (keys.includes(k) ? m : m | (1 << (KEYS.length - 1 - i))),
    0,
  );
}

const is = (set: SetName) => `g = ${mask(set)}`;

const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;

const PRODUCTION = (env: string) => `startsWith(lower(${env}), 'prod')`;

/**
 * The groups: every session of [previousFrom, to) once, `cur` when in the period, `matched`
 * when the filters keep it; the counts of each group are of the period's matched sessions
 * (`n`), the previous period's (`n_prev`) and the period's, filters or not (`n_all`: the
 * accounts without activity ignore the filters, as their query alone does).
 */
function groupsSql(source: SessionSource): string {
  const sets = Object.values(SETS)
    .map((keys) => `(${keys.join(", ")})`)
    .join(", ");
  const mine = "cur AND matched";
  return `SELECT grouping(${KEYS.join(", ")}) AS g, ${KEYS.join(", ")},
       countIf(${mine}) AS n, countIf(NOT cur AND matched) AS n_prev, countIf(cur) AS n_all,
       minIf(start_time, ${mine}) AS first, maxIf(start_time, ${mine}) AS last,
       anyIf(resource_technology, ${mine}) AS technology, anyIf(k_environment, ${mine}) AS any_environment,
       anyIf(person_name, ${mine}) AS name, anyIf(via, ${mine}) AS any_via,
       countIf(${mine} AND ${PRODUCTION("k_environment")}) AS production_n,
       countIf(${mine} AND ${PRIVILEGED}) AS privileged_n
FROM (
  SELECT *, start_time >= {from:DateTime64(3, 'UTC')} AS cur, ${SESSION_FILTERS} AS matched,
         if(cur, toDate(start_time), toDate(0)) AS d, environment AS k_environment
  FROM (${sessionsSql(source, "previousFrom", "to")})
)
GROUP BY GROUPING SETS (${sets})`;
}

/** The values counted over the groups (window functions), each for the rows that show it. */
const WINDOWS = `countIf(${is("pair")} AND n > 0) OVER (PARTITION BY person) AS w_systems,
       arrayStringConcat(arraySort(groupArrayIf(user_key, ${is("account")} AND n > 0) OVER (PARTITION BY person)), ', ') AS w_accounts,
       arrayStringConcat(arraySort(groupUniqArrayArrayIf(data_labels, ${is("labels")} AND n > 0) OVER (PARTITION BY person)), ', ') AS w_labels,
       arrayStringConcat(arraySort(groupUniqArrayIf(native_username, ${is("atom")} AND n > 0) OVER (PARTITION BY person, resource_name)), ', ') AS w_native_users,
       countIf(${is("dayPerson")} AND n > 0) OVER (PARTITION BY d) AS w_day_people,
       countIf(${is("person")} AND n > 0) OVER () AS w_people,
       countIf(${is("system")} AND n > 0) OVER () AS w_all_systems`;

/** The parts a group's row is in (none: it only counts in the windows). */
const PARTS = `multiIf(
    ${is("all")}, [${ACCESS_PARTS.totals}],
    ${is("person")} AND n > 0, [${ACCESS_PARTS.perPerson}],
    ${is("pair")} AND n > 0, if(n_prev = 0, [${ACCESS_PARTS.perPersonSystem}, ${ACCESS_PARTS.newAccess}], [${ACCESS_PARTS.perPersonSystem}]),
    ${is("atom")} AND n > 0 AND (${PRIVILEGED} OR ${PRODUCTION("k_environment")}), [${ACCESS_PARTS.privileged}],
    ${is("day")} AND n > 0, [${ACCESS_PARTS.perDay}],
    ${is("active")} AND n_all > 0, [${ACCESS_PARTS.activeAccounts}],
    CAST([], 'Array(UInt8)'))`;

/** The read, its rows in part order, each part in its table's order. */
export function accessOneRead(source: SessionSource): ReportQuery {
  const P = ACCESS_PARTS;
  return {
    id: "access.one_read",
    needs: sessionNeeds(source),
    sql: `SELECT part, person, name, any_via AS via, w_accounts AS accounts,
       if(part = ${P.totals}, w_all_systems, w_systems) AS systems,
       n AS sessions, ${T("first")} AS first_access, ${T("last")} AS last_access,
       production_n AS production_sessions, privileged_n AS privileged_sessions,
       w_labels AS data_labels, resource_name AS system, technology,
       if(part = ${P.privileged}, k_environment, any_environment) AS environment,
       w_native_users AS native_users, native_username AS native_user,
       ${PRIVILEGED} AS privileged, ${PRODUCTION("k_environment")} AS production,
       formatDateTime(d, '%Y-%m-%d') AS day,
       if(part = ${P.totals}, w_people, w_day_people) AS people,
       user_id, end_user_id, user_email, end_user_email
FROM (
  SELECT *, ${WINDOWS}
  FROM (${groupsSql(source)})
)
ARRAY JOIN ${PARTS} AS part
ORDER BY part, if(part = ${P.perPerson}, n, 0) DESC, person, system, native_user, k_environment, d`,
  };
}
