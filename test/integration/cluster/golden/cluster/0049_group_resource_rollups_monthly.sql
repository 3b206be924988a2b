CREATE TABLE IF NOT EXISTS sessionhouse.group_resource_rollups_monthly ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `user_group` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `sessions` UInt64,
    `users` AggregateFunction(uniq, String),
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_group, resource_name, resource_technology);

INSERT INTO sessionhouse.group_resource_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    user_group,
    resource_name,
    resource_technology,
    sum(sessions),
    uniqMergeState(users),
    min(first_start_time),
    max(last_start_time),
    now64(3, 'UTC')
FROM sessionhouse.group_resource_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    user_group,
    resource_name,
    resource_technology;
