-- The monthly rollup per user group, resource and technology (`day` is the month's first day),
-- over exactly the month's days `rollup_days` holds: the sum of group_resource_rollups_daily's
-- rows (sessions, the people's uniq states merged, the first and last start), for the whole
-- months of a range in _Groups × resources_. Computed with the other monthly rollups and
-- superseded the same way; read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.group_resource_rollups_monthly {{on_cluster}}
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

INSERT INTO {{db}}.group_resource_rollups_monthly
SELECT toStartOfMonth(day) AS month, user_group, resource_name, resource_technology, sum(sessions),
       uniqMergeState(users), min(first_start_time), max(last_start_time), now64(3, 'UTC')
FROM {{db}}.group_resource_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, user_group, resource_name, resource_technology;
