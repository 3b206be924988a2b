ALTER TABLE sessionhouse.session_rollups_daily
    (ADD COLUMN IF NOT EXISTS `user_type` LowCardinality(String) DEFAULT '');

ALTER TABLE sessionhouse.session_rollups_daily
    (ADD COLUMN IF NOT EXISTS `duration_sessions` UInt64 DEFAULT 0);

ALTER TABLE sessionhouse.session_rollups_daily
    (ADD COLUMN IF NOT EXISTS `duration_ms_max` UInt64 DEFAULT 0);

ALTER TABLE sessionhouse.session_rollups_daily
    (ADD COLUMN IF NOT EXISTS `last_start_time` DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC'));

ALTER TABLE sessionhouse.session_rollups_daily
    (ADD COLUMN IF NOT EXISTS `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)));

INSERT INTO sessionhouse.rollup_days SELECT
    source,
    day,
    toDateTime64(0, 3, 'UTC'),
    rows,
    now64(3, 'UTC')
FROM sessionhouse.rollup_days
FINAL
WHERE source = 'sessions';
