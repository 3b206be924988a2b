CREATE TABLE IF NOT EXISTS sessionhouse.job_schedules ON CLUSTER sessionhouse_cluster
(
    `job` String,
    `schedule` String,
    `period_seconds` UInt32,
    `recorded_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/job_schedules', '{replica}', recorded_at)
ORDER BY job;
