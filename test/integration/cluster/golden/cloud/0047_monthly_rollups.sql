CREATE TABLE IF NOT EXISTS sessionhouse.user_rollups_monthly
(
    `day` Date,
    `user_key` LowCardinality(String),
    `user_type` LowCardinality(String),
    `sessions` UInt64,
    `resources` AggregateFunction(uniq, String),
    `duration_ms_sum` UInt64,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key);

INSERT INTO sessionhouse.user_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    user_key,
    any(user_type),
    sum(sessions),
    uniqState(toString(resource_name)),
    sum(duration_ms_sum),
    now64(3, 'UTC')
FROM sessionhouse.session_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    user_key;

CREATE TABLE IF NOT EXISTS sessionhouse.resource_rollups_monthly
(
    `day` Date,
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `sessions` UInt64,
    `users` AggregateFunction(uniq, String),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_name, resource_technology);

INSERT INTO sessionhouse.resource_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    resource_name,
    resource_technology,
    sum(sessions),
    uniqState(toString(user_key)),
    max(last_start_time),
    now64(3, 'UTC')
FROM sessionhouse.session_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    resource_name,
    resource_technology;

CREATE TABLE IF NOT EXISTS sessionhouse.technology_rollups_monthly
(
    `day` Date,
    `resource_technology` LowCardinality(String),
    `sessions` UInt64,
    `users` AggregateFunction(uniq, String),
    `resources` AggregateFunction(uniq, String),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_technology);

INSERT INTO sessionhouse.technology_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    resource_technology,
    sum(sessions),
    uniqMergeState(users),
    uniqMergeState(resources),
    now64(3, 'UTC')
FROM sessionhouse.session_technology_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    resource_technology;

CREATE TABLE IF NOT EXISTS sessionhouse.child_session_rollups_daily
(
    `day` Date,
    `parent_session_id` String,
    `child_sessions` UInt64,
    `some_resources` Array(String),
    `user_key` LowCardinality(String),
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, parent_session_id);

INSERT INTO sessionhouse.child_session_rollups_daily SELECT
    toDate(start_time) AS day,
    parent_session_id,
    count(),
    arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5),
    any(user_key),
    min(start_time),
    max(start_time),
    now64(3, 'UTC')
FROM sessionhouse.sessions
FINAL
WHERE (toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (parent_session_id != '')
GROUP BY
    day,
    parent_session_id;
