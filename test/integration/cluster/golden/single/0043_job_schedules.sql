CREATE TABLE IF NOT EXISTS sessionhouse.job_schedules
(
    `job` String,
    `schedule` String,
    `period_seconds` UInt32,
    `recorded_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(recorded_at)
ORDER BY job;
