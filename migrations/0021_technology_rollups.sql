-- The daily rollup per technology alone: sessions, sessions with a duration, the longest
-- duration, a t-digest state of the duration's p50/p95, and uniq states of the people
-- (user_key) and resources. Over a long range with no filter but technology, the sessions
-- overview's duration panels and totals merge a few dozen of these a day instead of one state
-- per person × resource × connector × status (millions a year). Computed from `sessions FINAL`
-- with session_rollups_daily and superseded the same way (a technology a day no longer holds is
-- written again with sessions = 0); read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.session_technology_rollups_daily {{on_cluster}}
(
    day                  Date,
    resource_technology  LowCardinality(String),
    sessions             UInt64,
    duration_sessions    UInt64,
    duration_ms_max      UInt64,
    duration_tdigest     AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)),
    users                AggregateFunction(uniq, String),
    resources            AggregateFunction(uniq, String),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_technology);

-- The days rolled up already, from their rows in session_rollups_daily (days rolled up before
-- 0020 have no t-digest state there, and none here).
INSERT INTO {{db}}.session_technology_rollups_daily
SELECT day, resource_technology, sum(sessions), sum(duration_sessions), max(duration_ms_max),
       quantilesTDigestMergeState(0.5, 0.95)(duration_tdigest), uniqState(toString(user_key)),
       uniqState(toString(resource_name)), max(computed_at)
FROM {{db}}.session_rollups_daily FINAL
WHERE sessions > 0
GROUP BY day, resource_technology;
