CREATE TABLE IF NOT EXISTS sessionhouse.machine_resource_rollups_daily ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `client_ip_address` String,
    `sessions` UInt64,
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `last_session_id` String,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (user_key, resource_name, resource_technology, day, client_ip_address);

INSERT INTO sessionhouse.machine_resource_rollups_daily SELECT
    toDate(start_time) AS day,
    user_key,
    resource_name,
    resource_technology,
    client_ip_address,
    count(),
    min(start_time),
    max(start_time),
    argMax(id, start_time),
    now64(3, 'UTC')
FROM sessionhouse.sessions
FINAL
WHERE (toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (user_type = 'machine') AND (end_user_email = '') AND (end_user_name = '') AND (client_ip_address != '')
GROUP BY
    day,
    user_key,
    resource_name,
    resource_technology,
    client_ip_address;

CREATE TABLE IF NOT EXISTS sessionhouse.client_ip_rollups_monthly ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `client_ip_address` String,
    `user_type` LowCardinality(String),
    `sessions` UInt64,
    `users` AggregateFunction(uniq, String),
    `some_users` Array(String),
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, client_ip_address, user_type);

INSERT INTO sessionhouse.client_ip_rollups_monthly SELECT
    toStartOfMonth(day) AS month,
    client_ip_address,
    user_type,
    sum(sessions),
    uniqMergeState(users),
    arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_users)))), 1, 5),
    min(first_start_time),
    max(last_start_time),
    now64(3, 'UTC')
FROM sessionhouse.client_ip_rollups_daily
FINAL
WHERE (day IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (sessions > 0)
GROUP BY
    month,
    client_ip_address,
    user_type;
