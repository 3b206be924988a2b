CREATE TABLE IF NOT EXISTS sessionhouse.stream_windows
(
    `job` LowCardinality(String),
    `window_start` DateTime('UTC'),
    `window_end` DateTime('UTC'),
    `state` LowCardinality(String),
    `attempts` UInt32,
    `last_error` String,
    `skipped_by` String,
    `skip_reason` String,
    `run_id` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (job, window_start);

ALTER TABLE sessionhouse.agg_windows
    (ADD COLUMN IF NOT EXISTS `state` LowCardinality(String) DEFAULT 'stored');

ALTER TABLE sessionhouse.agg_windows
    (ADD COLUMN IF NOT EXISTS `refetched_num_hits` UInt64 DEFAULT 0);

CREATE TABLE IF NOT EXISTS sessionhouse.agg_jobs
(
    `job` LowCardinality(String),
    `query` String,
    `interval_s` UInt32,
    `window_ms` UInt64,
    `group_by` Array(String),
    `recorded_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(recorded_at)
ORDER BY job;
