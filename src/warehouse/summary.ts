// What the demo shows of what landed: small summaries of the sessions and of the default
// aggregation jobs, each a titled table of rows.
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { selectRows } from "./select.js";
import { Tables } from "./tables.js";

export interface SummaryTable {
  title: string;
  rows: Record<string, unknown>[];
}

async function tables(
  w: Warehouse,
  queries: readonly (readonly [string, string])[],
): Promise<SummaryTable[]> {
  const out: SummaryTable[] = [];
  for (const [title, sql] of queries)
    out.push({
      title,
      rows: await selectRows<Record<string, unknown>>(w, sql),
    });
  return out;
}

/**
 * Who a session was, as the dashboards name people: the person behind it (the service's own user,
 * or the end user a machine acted for, or the user or group an identity link names for a native
 * account), else the native account and its resource, else whatever name the record carries.
 */
const PERSON = `multiIf(
  person_email != '', person_email,
  person_name != '', person_name,
  native_username != '', concat(native_username, ' on ', resource_name),
  user_username != '', user_username,
  '(no user in the record)')`;

/** How the person was found: the record itself, an identity link, or not at all. */
const PERSON_VIA = `multiIf(
  person_via = 'brand', if(end_user_id != '', 'end user of a machine user', user_account_type),
  person_via = 'link_user', 'native account, identity link to a user',
  person_via = 'link_group', 'native account, identity link to a group',
  native_username != '', 'native account, no identity link',
  'unknown')`;

/** The `limit` people with the most sessions, each with how they were found. */
export function busiestUsersSql(w: Warehouse, limit: number): string {
  return `SELECT ${PERSON} AS user, ${PERSON_VIA} AS via, count() AS sessions,
              uniqExact(resource_id) AS resources
       FROM ${qualified(w, Tables.sessionsEnriched)}
       GROUP BY user, via ORDER BY sessions DESC, user LIMIT ${limit}`;
}

export function sessionSummary(w: Warehouse): Promise<SummaryTable[]> {
  const sessions = qualified(w, Tables.sessions);
  return tables(w, [
    [
      "Sessions stored",
      `SELECT count() AS sessions, uniqExact(user_id) AS users, uniqExact(resource_id) AS resources,
              min(start_time) AS first_start, max(start_time) AS last_start FROM ${sessions} FINAL`,
    ],
    [
      "Sessions by technology",
      `SELECT resource_technology AS technology, count() AS sessions,
              round(quantile(0.5)(duration_ms) / 1000, 1) AS p50_seconds
       FROM ${sessions} FINAL GROUP BY technology ORDER BY sessions DESC LIMIT 22`,
    ],
    ["Busiest users", busiestUsersSql(w, 5)],
    [
      "Busiest resources",
      `SELECT resource_name AS resource, resource_technology AS technology, count() AS sessions,
              uniqExact(user_id) AS users
       FROM ${sessions} FINAL GROUP BY resource, technology ORDER BY sessions DESC LIMIT 5`,
    ],
    [
      "Sessions still open",
      `SELECT session_status AS status, count() AS sessions, min(start_time) AS oldest_start
       FROM ${sessions} FINAL WHERE session_status != 'completed' GROUP BY status ORDER BY status`,
    ],
  ]);
}

export function aggregationSummary(w: Warehouse): Promise<SummaryTable[]> {
  const histogram = qualified(w, Tables.aggHistogram);
  const top = qualified(w, Tables.aggTopValues);
  return tables(w, [
    [
      "Policies triggered (log aggregations)",
      `SELECT key1 AS policy, key2 AS status, sum(count) AS events FROM ${histogram} FINAL
       WHERE job = 'policies_by_name_status' AND level = 2 AND count > 0
       GROUP BY policy, status ORDER BY events DESC LIMIT 5`,
    ],
    [
      "LLM calls by provider and model",
      `SELECT key1 AS provider, key2 AS model, sum(count) AS calls FROM ${histogram} FINAL
       WHERE job = 'llm_by_provider_model' AND level = 2 AND count > 0
       GROUP BY provider, model ORDER BY calls DESC LIMIT 5`,
    ],
    [
      "Data labels returned (sum of per-window top values)",
      `SELECT key AS data_label, sum(count) AS columns_returned FROM ${top} FINAL
       WHERE job = 'logs_by_technology' AND member = 'responseReturnedColumnDataLabels' AND count > 0
       GROUP BY data_label ORDER BY columns_returned DESC LIMIT 6`,
    ],
  ]);
}

/** The demo's view of the entity streams: the people behind native users, and suspensions. */
export function entitySummary(w: Warehouse): Promise<SummaryTable[]> {
  const enriched = qualified(w, Tables.sessionsEnriched);
  const suspensions = qualified(w, Tables.policySuspensionsLatest);
  const users = qualified(w, Tables.users);
  return tables(w, [
    [
      "Who is behind the busiest native users (identity link valid at each session's start)",
      `SELECT resource_name AS resource, native_username AS native_user, count() AS sessions,
              arrayStringConcat(groupUniqArrayIf(3)(if(person_email != '', person_email, person_name), person_via != 'none'), ', ') AS people,
              countIf(person_via = 'none') AS without_link
       FROM ${enriched}
       WHERE user_id = '' AND end_user_id = '' AND native_username != ''
       GROUP BY resource, native_user ORDER BY sessions DESC LIMIT 5`,
    ],
    [
      "Policy suspensions in force now",
      `SELECT s.policy_id AS policy, s.identity_type AS type, if(u.email != '', u.email, s.identity_id) AS identity,
              s.created_by AS created_by, s.request_id AS request_id, s.expire_at AS expires
       FROM ${suspensions} AS s
       LEFT JOIN (SELECT id, email FROM ${users} FINAL) AS u ON u.id = s.identity_id
       WHERE s.created_at <= now64(3) AND (s.expire_at IS NULL OR s.expire_at > now64(3))
         AND (s.removed_at IS NULL OR s.removed_at > now64(3))
       ORDER BY s.created_at DESC LIMIT 8`,
    ],
  ]);
}
