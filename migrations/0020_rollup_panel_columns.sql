-- What the sessions overview reads from the daily rollups over long ranges, beyond 0013's
-- columns: the person's type, the sessions with a duration, the longest duration, the latest
-- start, and the duration quantiles as a t-digest state (p50 and p95, as the panels show them;
-- a t-digest state merges in a fraction of the time of 0013's reservoir state).
ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    ADD COLUMN IF NOT EXISTS user_type LowCardinality(String) DEFAULT '';
ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    ADD COLUMN IF NOT EXISTS duration_sessions UInt64 DEFAULT 0;
ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    ADD COLUMN IF NOT EXISTS duration_ms_max UInt64 DEFAULT 0;
ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    ADD COLUMN IF NOT EXISTS last_start_time DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC');
ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    ADD COLUMN IF NOT EXISTS duration_tdigest AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64));

-- Every sessions day rolled up before these columns existed is computed again by the next
-- rollups run (its recorded latest fetch no longer matches), as long as its raw rows are kept;
-- it stays listed as rolled up meanwhile.
INSERT INTO {{db}}.rollup_days
SELECT source, day, toDateTime64(0, 3, 'UTC'), rows, now64(3, 'UTC')
FROM {{db}}.rollup_days FINAL
WHERE source = 'sessions';
