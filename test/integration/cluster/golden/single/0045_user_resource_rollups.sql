CREATE TABLE IF NOT EXISTS sessionhouse.user_resource_rollups_daily
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
PARTITION BY toYYYYMM(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, user_type, day);

INSERT INTO sessionhouse.user_resource_rollups_daily SELECT
    toDate(start_time) AS day,
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups,
    user_type,
    count(),
    min(start_time),
    max(start_time),
    arraySlice(arraySort(groupUniqArray(native_username)), 1, 3),
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
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups,
    user_type;
