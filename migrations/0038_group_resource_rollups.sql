-- The daily rollup per user group and resource, for the _Groups × resources_ panel (one row per
-- day × group of the session's user × resource × technology): sessions, a uniq state of the
-- people (user_key, as the panel counts them with uniq), the first and last start. A session
-- counts once under each group its user belongs to. Computed from `sessions FINAL` with
-- session_rollups_daily (the same days, the same `rollup_days` entries) and superseded the same
-- way (a key a day no longer holds is written again with sessions = 0); read
-- `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.group_resource_rollups_daily {{on_cluster}}
(
    day                  Date,
    user_group           LowCardinality(String),
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    sessions             UInt64,
    users                AggregateFunction(uniq, String),
    first_start_time     DateTime64(3, 'UTC'),
    last_start_time      DateTime64(3, 'UTC'),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_group, resource_name, resource_technology);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL` (the finer
-- rollup holds no groups); a day whose raw rows the retention deleted has no rows here.
INSERT INTO {{db}}.group_resource_rollups_daily
SELECT toDate(start_time) AS day, arrayJoin(user_groups) AS user_group, resource_name,
       resource_technology, count(), uniqState(toString(user_key)), min(start_time),
       max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
GROUP BY day, user_group, resource_name, resource_technology;
