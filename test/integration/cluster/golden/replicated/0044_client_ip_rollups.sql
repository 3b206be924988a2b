CREATE TABLE IF NOT EXISTS sessionhouse.client_ip_rollups_daily ON CLUSTER sessionhouse_cluster
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/client_ip_rollups_daily', '{replica}', computed_at)
PARTITION BY toYear(day)
ORDER BY (day, client_ip_address, user_type);

INSERT INTO sessionhouse.client_ip_rollups_daily SELECT
    toDate(start_time) AS day,
    client_ip_address,
    user_type,
    count(),
    uniqState(toString(user_key)),
    arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, 5),
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
    client_ip_address,
    user_type;

CREATE TABLE IF NOT EXISTS sessionhouse.machine_address_rollups_daily ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `user_key` LowCardinality(String),
    `client_ip_address` String,
    `sessions` UInt64,
    `some_resources` Array(String),
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `last_session_id` String,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/machine_address_rollups_daily', '{replica}', computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key, client_ip_address);

INSERT INTO sessionhouse.machine_address_rollups_daily SELECT
    toDate(start_time) AS day,
    user_key,
    client_ip_address,
    count(),
    arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5),
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
    client_ip_address;
