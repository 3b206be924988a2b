CREATE TABLE IF NOT EXISTS sessionhouse.user_resource_rollups_monthly
(
    `day` Date,
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `connector_name` LowCardinality(String),
    `user_groups` Array(LowCardinality(String)),
    `user_type` LowCardinality(String),
    `sessions` UInt64,
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `native_usernames` Array(String),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, user_type, day)
SETTINGS index_granularity = 1024;

INSERT INTO sessionhouse.user_resource_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups,
    user_type,
    sum(sessions),
    min(first_start_time),
    max(last_start_time),
    arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(native_usernames)))), 1, 3),
    now64(3, 'UTC')
FROM sessionhouse.user_resource_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups,
    user_type;
