CREATE TABLE IF NOT EXISTS sessionhouse.end_user_rollups_daily
(
    `day` Date,
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `connector_name` LowCardinality(String),
    `user_groups` Array(LowCardinality(String)),
    `sessions` UInt64,
    `end_users` AggregateFunction(uniq, String),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, day);

INSERT INTO sessionhouse.end_user_rollups_daily SELECT
    toDate(start_time) AS day,
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups,
    count(),
    uniqStateIf(end_user_email, end_user_email != ''),
    now64(3, 'UTC')
FROM sessionhouse.sessions
FINAL
WHERE (toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND ((end_user_email != '') OR (end_user_name != ''))
GROUP BY
    day,
    user_key,
    resource_name,
    resource_technology,
    connector_name,
    user_groups;

CREATE TABLE IF NOT EXISTS sessionhouse.user_type_rollups_half_hourly
(
    `day` Date,
    `half_hour` DateTime('UTC'),
    `user_type` LowCardinality(String),
    `sessions` UInt64,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, half_hour, user_type);

INSERT INTO sessionhouse.user_type_rollups_half_hourly SELECT
    toDate(start_time) AS day,
    toStartOfInterval(toDateTime(start_time), toIntervalSecond(1800)),
    user_type,
    count(),
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
    toStartOfInterval(toDateTime(start_time), toIntervalSecond(1800)),
    user_type;
