-- ListLogAggregations, per configured aggregation job.
--
-- Late data: the service's counts for recent windows grow as logs arrive, so windows are
-- fetched again. A re-fetch supersedes the earlier fetch entirely: its rows carry a newer
-- `fetched_at`, rows of the earlier fetch that the new one no longer holds are written again
-- with count 0 (in the same insert block, so the change is atomic), and FINAL keeps the latest
-- row per key. Queries read `FINAL … WHERE count > 0` and never double count.

-- The histogram flattened: one row per time bucket and group path. level 0 is the bucket's
-- total; level N holds the keys of the first N group-by fields.
CREATE TABLE IF NOT EXISTS {{db}}.agg_histogram {{on_cluster}}
(
    job           LowCardinality(String),
    bucket_time   DateTime('UTC'),
    interval_s    UInt32,
    level         UInt8,
    field1        LowCardinality(String),
    key1          String,
    field2        LowCardinality(String),
    key2          String,
    field3        LowCardinality(String),
    key3          String,
    count         UInt64,
    window_start  DateTime('UTC'),
    fetched_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(fetched_at)
PARTITION BY toYYYYMM(bucket_time)
ORDER BY (job, level, bucket_time, key1, key2, key3)
SETTINGS non_replicated_deduplication_window = 10000;

-- The top-value lists (sessionTypes … llmStopReasons, and members the spec does not name yet),
-- per fetched window.
CREATE TABLE IF NOT EXISTS {{db}}.agg_top_values {{on_cluster}}
(
    job           LowCardinality(String),
    window_start  DateTime('UTC'),
    window_end    DateTime('UTC'),
    member        LowCardinality(String),
    key           String,
    count         UInt64,
    fetched_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(fetched_at)
PARTITION BY toYYYYMM(window_start)
ORDER BY (job, member, window_start, key)
SETTINGS non_replicated_deduplication_window = 10000;

-- One row per window and job: its numHits and when it was fetched (the latest fetch wins).
CREATE TABLE IF NOT EXISTS {{db}}.agg_windows {{on_cluster}}
(
    job             LowCardinality(String),
    window_start    DateTime('UTC'),
    window_end      DateTime('UTC'),
    query           String,
    interval_s      UInt32,
    group_by        Array(String),
    num_hits        UInt64,
    histogram_rows  UInt64,
    fetched_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(fetched_at)
PARTITION BY toYYYYMM(window_start)
ORDER BY (job, window_start)
SETTINGS non_replicated_deduplication_window = 10000;
