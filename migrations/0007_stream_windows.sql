-- Per-window bookkeeping of the aggregation jobs.
--
-- stream_windows: the state of every window a job fetched or tried to fetch. The aggregation
-- checkpoint moves only over the leading windows that are `stored`, `shrunk` or `skipped`; a
-- window whose answer was bad stays `pending` (fetched again on every run) until it is stored or
-- has failed `aggregations.maxWindowAttempts` times, then it is `poisoned` and waits for an
-- operator (`sessionhouse windows skip`). The latest row per job and window wins.
CREATE TABLE IF NOT EXISTS {{db}}.stream_windows {{on_cluster}}
(
    job           LowCardinality(String),
    window_start  DateTime('UTC'),
    window_end    DateTime('UTC'),
    state         LowCardinality(String),
    attempts      UInt32,
    last_error    String,
    skipped_by    String,
    skip_reason   String,
    run_id        String,
    updated_at    DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY (job, window_start);

-- A re-fetch that reports fewer hits than stored does not replace the stored counts: the
-- window's row keeps its counts and says `shrunk`, with the hits the re-fetch reported.
ALTER TABLE {{db}}.agg_windows {{on_cluster}}
    ADD COLUMN IF NOT EXISTS state LowCardinality(String) DEFAULT 'stored';
ALTER TABLE {{db}}.agg_windows {{on_cluster}}
    ADD COLUMN IF NOT EXISTS refetched_num_hits UInt64 DEFAULT 0;

-- The definition each aggregation job's stored rows were made with. A job whose query,
-- interval, window or group-by fields change under the same name is refused: old and new rows
-- would mix in the same tables.
CREATE TABLE IF NOT EXISTS {{db}}.agg_jobs {{on_cluster}}
(
    job          LowCardinality(String),
    query        String,
    interval_s   UInt32,
    window_ms    UInt64,
    group_by     Array(String),
    recorded_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(recorded_at)
ORDER BY job;
