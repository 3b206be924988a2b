CREATE TABLE IF NOT EXISTS sessionhouse.checkpoints
(
    `stream` String,
    `position` DateTime64(3, 'UTC'),
    `detail` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY stream;

CREATE TABLE IF NOT EXISTS sessionhouse.dead_letters
(
    `job` LowCardinality(String),
    `record_hash` String,
    `record_id` String,
    `reason` String,
    `raw` String CODEC(ZSTD(3)),
    `seen_at` DateTime64(3, 'UTC'),
    `run_id` String
)
ENGINE = ReplacingMergeTree(seen_at)
ORDER BY (job, record_hash)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS sessionhouse.runs
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
ENGINE = ReplacingMergeTree(updated_at)
PARTITION BY toYYYYMM(started_at)
ORDER BY (job, started_at, run_id)
TTL toDateTime(started_at) + toIntervalDay(400);
