CREATE TABLE IF NOT EXISTS sessionhouse.user_resource_first_seen_local ON CLUSTER sessionhouse_cluster
(
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `first_seen` SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/sessionhouse/user_resource_first_seen_local', '{replica}')
ORDER BY (user_key, resource_name);

CREATE TABLE IF NOT EXISTS sessionhouse.user_resource_first_seen ON CLUSTER sessionhouse_cluster AS sessionhouse.user_resource_first_seen_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'user_resource_first_seen_local', cityHash64(user_key));

CREATE TABLE IF NOT EXISTS sessionhouse.user_active_days_local ON CLUSTER sessionhouse_cluster
(
    `user_key` LowCardinality(String),
    `day` Date,
    `first_start` SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    `last_start` SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/sessionhouse/user_active_days_local', '{replica}')
ORDER BY (user_key, day);

CREATE TABLE IF NOT EXISTS sessionhouse.user_active_days ON CLUSTER sessionhouse_cluster AS sessionhouse.user_active_days_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'user_active_days_local', cityHash64(user_key));

CREATE MATERIALIZED VIEW IF NOT EXISTS sessionhouse.user_resource_first_seen_mv ON CLUSTER sessionhouse_cluster TO sessionhouse.user_resource_first_seen
AS SELECT
    user_key,
    resource_name,
    min(start_time) AS first_seen
FROM sessionhouse.sessions_local
GROUP BY
    user_key,
    resource_name;

CREATE MATERIALIZED VIEW IF NOT EXISTS sessionhouse.user_active_days_mv ON CLUSTER sessionhouse_cluster TO sessionhouse.user_active_days
AS SELECT
    user_key,
    toDate(start_time) AS day,
    min(start_time) AS first_start,
    max(start_time) AS last_start
FROM sessionhouse.sessions_local
GROUP BY
    user_key,
    day;

INSERT INTO sessionhouse.user_resource_first_seen SELECT
    user_key,
    resource_name,
    min(start_time)
FROM sessionhouse.sessions
GROUP BY
    user_key,
    resource_name;

INSERT INTO sessionhouse.user_active_days SELECT
    user_key,
    toDate(start_time),
    min(start_time),
    max(start_time)
FROM sessionhouse.sessions
GROUP BY
    user_key,
    toDate(start_time);
