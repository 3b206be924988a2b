CREATE TABLE IF NOT EXISTS sessionhouse.group_resource_rollups_daily ON CLUSTER sessionhouse_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/group_resource_rollups_daily', '{replica}', computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_group, resource_name, resource_technology);

INSERT INTO sessionhouse.group_resource_rollups_daily SELECT
    toDate(start_time) AS day,
    arrayJoin(user_groups) AS user_group,
    resource_name,
    resource_technology,
    count(),
    uniqState(toString(user_key)),
    min(start_time),
    max(start_time),
    now64(3, 'UTC')
FROM sessionhouse.sessions
FINAL
WHERE toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)
GROUP BY
    day,
    user_group,
    resource_name,
    resource_technology;
