// Report queries over the control-plane streams (migration 0009): accounts with access but no
// session in the period, and policy suspensions in force during it with the sessions that
// happened under them. Parameters: {from}, {to}, {user}, {resource}.
import type { ReportQuery } from "./query.js";

const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;
const IN_PERIOD = `start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}`;

/** The latest version of every suspension in force at some time of the period: created
 *  before its end, neither expired nor revoked (removed_at) before its start. */
const SUSPENSIONS = `SELECT * FROM {{db}}.policy_suspensions_latest
WHERE created_at < {to:DateTime64(3, 'UTC')}
  AND (expire_at IS NULL OR expire_at > {from:DateTime64(3, 'UTC')})
  AND (removed_at IS NULL OR removed_at > {from:DateTime64(3, 'UTC')})`;

/** A suspension of SUSPENSIONS still in force at the period's end. */
const STILL_ACTIVE = `(expire_at IS NULL OR expire_at > {to:DateTime64(3, 'UTC')})
         AND (removed_at IS NULL OR removed_at > {to:DateTime64(3, 'UTC')})`;

/**
 * The ids and e-mails of the users and end users of the period's sessions, from one read of
 * them (a set the engine builds once, however often the query names it).
 */
const ACTIVE_ACCOUNTS = `(
    SELECT arrayJoin([('id', user_id), ('id', end_user_id), ('email', user_email), ('email', end_user_email)])
    FROM {{db}}.sessions FINAL WHERE ${IN_PERIOD}
  )`;

/** What a suspension's identity is matched against: a group's, or a user's (as user or end user). */
const IDENTITY_KIND = `if(identity_type = 'group', 'group', 'user')`;

/**
 * The identities a session acts as, each once: (user, its user and end user ids) and (group,
 * every group of either). A session is under a suspension whose kind and identity are one of
 * these.
 */
const SESSION_IDENTITIES = `arrayDistinct(arrayConcat(
      arrayMap(x -> ('user', x), [user_id, end_user_id]),
      arrayMap(x -> ('group', toString(x)), arrayConcat(user_groups, end_user_groups))))`;

/**
 * The identities under a suspension of the period, as (kind, id): a set the engine builds once
 * and looks each session's identities up in. A constant array of them, searched with `has` on
 * every session, cost the suspensions' number on every session: over the 1M organisation year
 * (3,406 suspended users) 50 s of CPU for this query alone.
 */
const SUSPENDED_IDENTITIES = `(SELECT ${IDENTITY_KIND}, identity_id FROM (${SUSPENSIONS}))`;

/**
 * The UTC days of the period on which a suspension of SUSPENSIONS was in force at some time: a
 * session meets only the suspensions of its own day. Joined on the identity alone, a session of
 * a team met every suspension of that team in the whole period (over the 1M organisation year
 * 17.7 million pairs for 0.98 million rows kept), a number that grows with the period's length.
 */
const IN_FORCE_DAYS = `arrayMap(i -> first_day + i, range(toUInt32(greatest(0, dateDiff('day', first_day,
      toDate(least(ifNull(expire_at, {to:DateTime64(3, 'UTC')}), ifNull(removed_at, {to:DateTime64(3, 'UTC')}),
        {to:DateTime64(3, 'UTC')}) - toIntervalMillisecond(1), 'UTC')) + 1))))`;

const SUSPENSION_FILTER = `({user:String} = '' OR identity_id = {user:String})`;

export const controlPlaneQueries = {
  inactiveAccounts: {
    id: "access.accounts_without_activity",
    needs: ["users", "sessions"],
    sql: `SELECT id, email, full_name AS name, type, db_username,
       if(expire_at IS NULL, '', ${T("assumeNotNull(expire_at)")}) AS expires
FROM {{db}}.users FINAL
WHERE is_deleted = 0 AND created_at < {to:DateTime64(3, 'UTC')}
  AND ({user:String} = '' OR email = {user:String} OR db_username = {user:String})
  AND ('id', id) NOT IN ${ACTIVE_ACCOUNTS}
  AND (email = '' OR ('email', email) NOT IN ${ACTIVE_ACCOUNTS})
ORDER BY type, email, id`,
  },
  suspensions: {
    id: "policy.suspensions",
    needs: ["policy_suspensions"],
    sql: `SELECT id, policy_id, identity_type, identity_id, suspension_type, created_by, request_id,
       ${T("created_at")} AS valid_from,
       if(expire_at IS NULL, '', ${T("assumeNotNull(expire_at)")}) AS valid_until,
       ${STILL_ACTIVE} AS still_active,
       input_condition
FROM (${SUSPENSIONS})
WHERE ${SUSPENSION_FILTER}
ORDER BY created_at, id`,
  },
  suspensionTotals: {
    id: "policy.suspension_totals",
    needs: ["policy_suspensions"],
    sql: `SELECT count() AS suspensions, countIf(${STILL_ACTIVE}) AS still_active
FROM (${SUSPENSIONS})
WHERE ${SUSPENSION_FILTER}`,
  },
  sessionsUnder: {
    id: "policy.sessions_under_suspensions",
    needs: ["policy_suspensions", "sessions"],
    sql: `SELECT p.id AS suspension_id, p.policy_id AS policy_id, s.id AS session_id,
       ${T("s.start_time")} AS start_time, s.user_key AS user, s.resource_name AS resource,
       s.native_username AS native_user
FROM (
  SELECT id, start_time, user_key, resource_name, native_username,
         identity.1 AS identity_kind, identity.2 AS identity_id, toDate(start_time, 'UTC') AS day
  FROM (
    SELECT id, start_time, user_key, resource_name, native_username, user_id, end_user_id,
           user_groups, end_user_groups
    FROM {{db}}.sessions FINAL
    WHERE ${IN_PERIOD} AND ({resource:String} = '' OR resource_name = {resource:String})
  )
  -- Each session once per identity it acts as: its user and end user, their groups; only
  -- the suspended ones go on to the join.
  ARRAY JOIN ${SESSION_IDENTITIES} AS identity
  WHERE identity IN ${SUSPENDED_IDENTITIES}
) AS s
-- The suspensions on the right, once a day they were in force: a join holds its right side in
-- memory (a row a suspension and day), and the sessions of the suspended identities stream past.
INNER JOIN (
  SELECT id, policy_id, created_at, expire_at, removed_at, identity_id, ${IDENTITY_KIND} AS identity_kind,
         toDate(greatest(created_at, {from:DateTime64(3, 'UTC')}), 'UTC') AS first_day,
         arrayJoin(${IN_FORCE_DAYS}) AS day
  FROM (${SUSPENSIONS})
) AS p ON s.identity_kind = p.identity_kind AND s.identity_id = p.identity_id AND s.day = p.day
WHERE s.start_time >= p.created_at AND (p.expire_at IS NULL OR s.start_time < p.expire_at)
  AND (p.removed_at IS NULL OR s.start_time < p.removed_at)
  AND ({user:String} = '' OR s.user_key = {user:String} OR p.identity_id = {user:String})
ORDER BY s.start_time, p.id, s.id`,
  },
} as const satisfies Record<string, ReportQuery>;
