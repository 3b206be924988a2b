CREATE TABLE IF NOT EXISTS sessionhouse.checkpoints ON CLUSTER sessionhouse_cluster
(
    `stream` String,
    `position` DateTime64(3, 'UTC'),
    `detail` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/sessionhouse/checkpoints', '{shard}-{replica}', updated_at)
ORDER BY stream;

CREATE TABLE IF NOT EXISTS sessionhouse.dead_letters_local ON CLUSTER sessionhouse_cluster
(
    `job` LowCardinality(String),
    `record_hash` String,
    `record_id` String,
    `reason` String,
    `raw` String CODEC(ZSTD(3)),
    `seen_at` DateTime64(3, 'UTC'),
    `run_id` String
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/dead_letters_local', '{replica}', seen_at)
ORDER BY (job, record_hash)
SETTINGS replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS sessionhouse.dead_letters ON CLUSTER sessionhouse_cluster AS sessionhouse.dead_letters_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'dead_letters_local', cityHash64(job));

CREATE TABLE IF NOT EXISTS sessionhouse.runs ON CLUSTER sessionhouse_cluster
(
    `run_id` String,
    `job` LowCardinality(String),
    `started_at` DateTime64(3, 'UTC'),
    `finished_at` Nullable(DateTime64(3, 'UTC')),
    `status` LowCardinality(String),
    `pages` UInt64,
    `rows_inserted` UInt64,
    `dead_letters` UInt64,
    `retries` UInt64,
    `error` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/sessionhouse/runs', '{shard}-{replica}', updated_at)
PARTITION BY toYYYYMM(started_at)
ORDER BY (job, started_at, run_id)
TTL toDateTime(started_at) + toIntervalDay(400);
