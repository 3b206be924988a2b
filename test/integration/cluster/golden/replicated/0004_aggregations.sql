CREATE TABLE IF NOT EXISTS sessionhouse.agg_histogram ON CLUSTER sessionhouse_cluster
(
    `job` LowCardinality(String),
    `bucket_time` DateTime('UTC'),
    `interval_s` UInt32,
    `level` UInt8,
    `field1` LowCardinality(String),
    `key1` String,
    `field2` LowCardinality(String),
    `key2` String,
    `field3` LowCardinality(String),
    `key3` String,
    `count` UInt64,
    `window_start` DateTime('UTC'),
    `fetched_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/agg_histogram', '{replica}', fetched_at)
PARTITION BY toYYYYMM(bucket_time)
ORDER BY (job, level, bucket_time, key1, key2, key3)
SETTINGS replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS sessionhouse.agg_top_values ON CLUSTER sessionhouse_cluster
(
    `job` LowCardinality(String),
    `window_start` DateTime('UTC'),
    `window_end` DateTime('UTC'),
    `member` LowCardinality(String),
    `key` String,
    `count` UInt64,
    `fetched_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/agg_top_values', '{replica}', fetched_at)
PARTITION BY toYYYYMM(window_start)
ORDER BY (job, member, window_start, key)
SETTINGS replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS sessionhouse.agg_windows ON CLUSTER sessionhouse_cluster
(
    `job` LowCardinality(String),
    `window_start` DateTime('UTC'),
    `window_end` DateTime('UTC'),
    `query` String,
    `interval_s` UInt32,
    `group_by` Array(String),
    `num_hits` UInt64,
    `histogram_rows` UInt64,
    `fetched_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/agg_windows', '{replica}', fetched_at)
PARTITION BY toYYYYMM(window_start)
ORDER BY (job, window_start)
SETTINGS replicated_deduplication_window = 10000;
