-- Daily rollups that outlive the raw rows.
--
-- session_rollups_daily: one row per day (of start_time, UTC) and person (user_key), resource,
-- technology, connector and status, computed from `sessions FINAL` once the day is settled (no
-- session of it still open, or the day older than a bound), so a session is counted once, in its
-- last state. A day computed again (a late read changed it) supersedes its earlier rows: its rows
-- carry a newer `computed_at`, keys the new computation no longer holds are written again with
-- sessions = 0 in the same insert, and FINAL keeps the latest row per key. Queries read
-- `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.session_rollups_daily {{on_cluster}}
(
    day                  Date,
    user_key             LowCardinality(String),
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    connector_name       LowCardinality(String),
    session_status       LowCardinality(String),
    sessions             UInt64,
    distinct_sessions    UInt64,
    child_sessions       UInt64,
    duration_ms_sum      UInt64,
    duration_quantiles   AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key, resource_name, resource_technology, connector_name, session_status);

-- The returned data labels per day, from the aggregation jobs grouped first by
-- response.returned_columns.data_label (their level-1 histogram rows), superseded the same way.
CREATE TABLE IF NOT EXISTS {{db}}.data_label_rollups_daily {{on_cluster}}
(
    day          Date,
    job          LowCardinality(String),
    data_label   String,
    count        UInt64,
    computed_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (job, day, data_label);

-- One row per rolled-up day and source: what the day's rows looked like when it was computed
-- (`source_fetched_max`, the latest fetch among them) and what it holds. A day whose latest
-- fetch moved since (a late read) is computed again; `rows` is the sessions it counted (0 for
-- the data labels). The latest row per day and source wins.
CREATE TABLE IF NOT EXISTS {{db}}.rollup_days {{on_cluster}}
(
    source              LowCardinality(String),
    day                 Date,
    source_fetched_max  DateTime64(3, 'UTC'),
    rows                UInt64,
    computed_at         DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
ORDER BY (source, day);
