-- The schedule `run` last started each job with, and its period: the longest gap between two of
-- its ticks (src/scheduler/cron.ts, schedulePeriodMs). A checkpoint stream moves on its job's
-- schedule, and a directory stream read once a day stands up to a day behind the clock when
-- nothing is wrong: the lag alert and the "Lag per stream" panel subtract the period of the
-- stream's job (the job of the stream's name, else the job its first part names:
-- detections.<rule> → detections). Written by `run` once it holds the service lease, so a changed
-- schedule counts from the next start. The latest row per job wins.
CREATE TABLE IF NOT EXISTS {{db}}.job_schedules {{on_cluster}}
(
    job             String,
    schedule        String,
    period_seconds  UInt32,
    recorded_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(recorded_at)
ORDER BY job;
