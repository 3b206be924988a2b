// What a report's filter values name: whether a value was seen in a session that started
// before the period's end, in the period or before it, and the values seen (for the nearest
// ones a refusal offers). A person is the sessions' user key, or with the control-plane streams
// (sessions_enriched) also the e-mail or name of the human behind it, as the report's filter
// matches them; a resource is its name; an environment comes from `resource_environments`.
// Parameters: {from}, {to} (DateTime64(3, 'UTC') text) and {value} (the filter's value); the
// sessions every filter matches at once also {user}, {resource}, {environment} ('' = all).
import type { ReportQuery } from "./query.js";
import {
  periodSessionsSql,
  sessionNeeds,
  type SessionSource,
} from "./session-queries.js";

export type FilterKey = "user" | "resource" | "environment";

/** The values of a filter key with the start of each session that has them. */
function valuesOf(key: FilterKey, source: SessionSource): string {
  if (key === "user")
    return source === "enriched"
      ? `SELECT arrayJoin(arrayDistinct(arrayFilter(x -> x != '', [user_key, person_email, person_name]))) AS value, start_time
  FROM {{db}}.sessions_enriched`
      : `SELECT user_key AS value, start_time FROM {{db}}.sessions FINAL`;
  if (key === "resource")
    return `SELECT resource_name AS value, start_time FROM {{db}}.sessions FINAL`;
  return `SELECT e.environment AS value, s.start_time AS start_time
  FROM {{db}}.sessions AS s FINAL
  INNER JOIN {{db}}.resource_environments AS e ON e.resource_name = s.resource_name`;
}

function needsOf(key: FilterKey, source: SessionSource): string[] {
  if (key === "user")
    return [source === "enriched" ? "sessions_enriched" : "sessions"];
  return key === "resource"
    ? ["sessions"]
    : ["sessions", "resource_environments"];
}

/** Where a filter value was seen: sessions before the period, in it, and the last one before. */
export function filterSeenQuery(
  key: FilterKey,
  source: SessionSource,
): ReportQuery {
  return {
    id: `filter.${key}.seen`,
    needs: needsOf(key, source),
    sql: `SELECT countIf(start_time < {from:DateTime64(3, 'UTC')}) AS before,
       countIf(start_time >= {from:DateTime64(3, 'UTC')}) AS in_period,
       if(before = 0, '', formatDateTime(maxIf(start_time, start_time < {from:DateTime64(3, 'UTC')}), '%Y-%m-%d %H:%i:%S')) AS last_before
FROM (${valuesOf(key, source)})
WHERE start_time < {to:DateTime64(3, 'UTC')} AND value = {value:String}`,
  };
}

/** The values of a filter key seen before the period's end (the first 100,000 by name). */
export function filterValuesQuery(
  key: FilterKey,
  source: SessionSource,
): ReportQuery {
  return {
    id: `filter.${key}.values`,
    needs: needsOf(key, source),
    sql: `SELECT value FROM (${valuesOf(key, source)})
WHERE start_time < {to:DateTime64(3, 'UTC')} AND value != ''
GROUP BY value
ORDER BY value
LIMIT 100000`,
  };
}

/** The sessions of the period that every filter matches at once (as the report reads them). */
export function filteredSessionsQuery(source: SessionSource): ReportQuery {
  return {
    id: "filter.sessions",
    needs: sessionNeeds(source),
    sql: `SELECT count() AS sessions FROM (${periodSessionsSql(source)})`,
  };
}
