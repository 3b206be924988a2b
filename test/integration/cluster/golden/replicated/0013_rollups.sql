CREATE TABLE IF NOT EXISTS sessionhouse.session_rollups_daily ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `connector_name` LowCardinality(String),
    `session_status` LowCardinality(String),
    `sessions` UInt64,
    `distinct_sessions` UInt64,
    `child_sessions` UInt64,
    `duration_ms_sum` UInt64,
    `duration_quantiles` AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/session_rollups_daily', '{replica}', computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key, resource_name, resource_technology, connector_name, session_status);

CREATE TABLE IF NOT EXISTS sessionhouse.data_label_rollups_daily ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `job` LowCardinality(String),
    `data_label` String,
    `count` UInt64,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/data_label_rollups_daily', '{replica}', computed_at)
PARTITION BY toYear(day)
ORDER BY (job, day, data_label);

CREATE TABLE IF NOT EXISTS sessionhouse.rollup_days ON CLUSTER sessionhouse_cluster
(
    `source` LowCardinality(String),
    `day` Date,
    `source_fetched_max` DateTime64(3, 'UTC'),
    `rows` UInt64,
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/rollup_days', '{replica}', computed_at)
ORDER BY (source, day);
