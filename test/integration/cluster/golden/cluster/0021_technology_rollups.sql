CREATE TABLE IF NOT EXISTS sessionhouse.session_technology_rollups_daily ON CLUSTER sessionhouse_cluster
(
    `day` Date,
    `resource_technology` LowCardinality(String),
    `sessions` UInt64,
    `duration_sessions` UInt64,
    `duration_ms_max` UInt64,
    `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)),
    `users` AggregateFunction(uniq, String),
    `resources` AggregateFunction(uniq, String),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_technology);

INSERT INTO sessionhouse.session_technology_rollups_daily SELECT
    day,
    resource_technology,
    sum(sessions),
    sum(duration_sessions),
    max(duration_ms_max),
    quantilesTDigestMergeState(0.5, 0.95)(duration_tdigest),
    uniqState(toString(user_key)),
    uniqState(toString(resource_name)),
    max(computed_at)
FROM sessionhouse.session_rollups_daily
FINAL
WHERE sessions > 0
GROUP BY
    day,
    resource_technology;
