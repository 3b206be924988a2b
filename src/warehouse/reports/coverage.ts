// What the record covers, for every report's first page and the coverage-and-integrity report:
// dead letters, extent and rows per month, retention (the checkpoints, windows and runs are
// read through the status read model, src/pipeline/status.ts).
// Parameters: {from}, {to} (DateTime64(3, 'UTC') text), the report's period [from, to).
// A column formatted under its own name is referred to through its table alias elsewhere in the
// query (an alias would shadow the column in WHERE and ORDER BY).
import type { ReportQuery } from "./query.js";

const T = (c: string) => `formatDateTime(${c}, '%Y-%m-%d %H:%i:%S')`;

export const coverageQueries = {
  sessionsExtent: {
    id: "coverage.sessions_extent",
    needs: ["sessions"],
    sql: `SELECT count() AS sessions,
       if(count() = 0, '', ${T("min(start_time)")}) AS oldest,
       if(count() = 0, '', ${T("max(start_time)")}) AS newest,
       countIf(start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}) AS in_period
FROM {{db}}.sessions FINAL`,
  },
  deadLetters: {
    id: "coverage.dead_letters",
    needs: ["dead_letters"],
    sql: `SELECT job, reason, count() AS records, ${T("min(seen_at)")} AS first_seen, ${T("max(seen_at)")} AS last_seen
FROM {{db}}.dead_letters FINAL
WHERE seen_at >= {from:DateTime64(3, 'UTC')} AND seen_at < {to:DateTime64(3, 'UTC')}
GROUP BY job, reason
ORDER BY job, reason`,
  },
  sessionsPerMonth: {
    id: "coverage.sessions_per_month",
    needs: ["sessions"],
    sql: `SELECT formatDateTime(toStartOfMonth(start_time), '%Y-%m') AS month, count() AS sessions,
       uniqExact(user_key) AS people, uniqExact(resource_name) AS resources
FROM {{db}}.sessions FINAL
GROUP BY month
ORDER BY month`,
  },
  aggregationsPerMonth: {
    id: "coverage.aggregation_windows_per_month",
    needs: ["agg_windows"],
    sql: `SELECT formatDateTime(toStartOfMonth(window_start), '%Y-%m') AS month, job,
       count() AS windows, sum(num_hits) AS log_events, countIf(state = 'shrunk') AS shrunk
FROM {{db}}.agg_windows FINAL
GROUP BY month, job
ORDER BY month, job`,
  },
  aggregationGaps: {
    id: "coverage.aggregation_gaps",
    needs: ["agg_windows", "agg_jobs"],
    sql: `SELECT j.job AS job, intDiv(j.window_ms, 1000) AS window_s,
       toUInt64(greatest(0, intDiv(toUnixTimestamp({to:DateTime64(3, 'UTC')}) - toUnixTimestamp({from:DateTime64(3, 'UTC')}), intDiv(j.window_ms, 1000)))) AS windows_in_period,
       toUInt64(countIf(w.job != '')) AS windows_stored
FROM {{db}}.agg_jobs AS j FINAL
LEFT JOIN (
  SELECT job, window_start FROM {{db}}.agg_windows FINAL
  WHERE window_start >= {from:DateTime64(3, 'UTC')} AND window_start < {to:DateTime64(3, 'UTC')}
) AS w ON w.job = j.job
GROUP BY j.job, j.window_ms
ORDER BY j.job`,
  },
  daysWithoutSessions: {
    id: "coverage.days_without_sessions",
    needs: ["sessions"],
    sql: `SELECT formatDateTime(d, '%Y-%m-%d') AS day
FROM (
  SELECT toDate({from:DateTime64(3, 'UTC')}) + number AS d
  FROM numbers(toUInt64(greatest(0, dateDiff('day', toDate({from:DateTime64(3, 'UTC')}), toDate({to:DateTime64(3, 'UTC')} - toIntervalMillisecond(1))) + 1)))
)
WHERE d NOT IN (
  SELECT DISTINCT toDate(start_time) FROM {{db}}.sessions FINAL
  WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
)
ORDER BY day`,
  },
  retentionSettings: {
    id: "coverage.retention_settings",
    needs: ["retention_settings"],
    sql: `SELECT table_name AS table, ttl, hot_days, cold_volume, retention_days,
       ${T("applied_at")} AS applied
FROM {{db}}.retention_settings AS r FINAL
ORDER BY r.table_name`,
  },
  legalHolds: {
    id: "coverage.legal_holds",
    needs: ["legal_holds"],
    sql: `SELECT hold_id, scope, value, reason, created_by, ${T("h.created_at")} AS created,
       if(h.until IS NULL, '', ${T("assumeNotNull(h.until)")}) AS until,
       if(h.released_at IS NULL, '', ${T("assumeNotNull(h.released_at)")}) AS released, released_by
FROM {{db}}.legal_holds AS h FINAL
WHERE h.created_at < {to:DateTime64(3, 'UTC')}
  AND (h.released_at IS NULL OR h.released_at > {from:DateTime64(3, 'UTC')})
  AND (h.until IS NULL OR h.until > {from:DateTime64(3, 'UTC')})
ORDER BY h.created_at, h.hold_id`,
  },
  retention: {
    id: "coverage.retention",
    needs: [],
    // On a cluster with distributed tables the rows and their TTL are in <name>_local.
    sql: `SELECT replaceRegexpOne(name, '_local$', '') AS table, engine,
       if(position(engine_full, ' TTL ') > 0, trim(extract(engine_full, ' TTL (.*?)(?: SETTINGS |$)')), '') AS ttl
FROM system.tables
WHERE database = {db:String} AND engine != 'Distributed'
  AND replaceRegexpOne(name, '_local$', '') IN ('sessions', 'runs', 'agg_histogram', 'agg_top_values', 'agg_windows', 'dead_letters')
ORDER BY table`,
  },
} as const satisfies Record<string, ReportQuery>;
