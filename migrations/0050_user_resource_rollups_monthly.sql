-- The monthly rollup per person and resource (`day` is the month's first day), over exactly the
-- month's days `rollup_days` holds: the sum of user_resource_rollups_daily's rows per person ×
-- resource × technology × connector × the person's groups × type (every filter of the dashboard
-- applies to it), with sessions, the first and last start, and the three smallest database users
-- (among the three smallest of its days), for the whole months of a range in _Users × resources_.
-- Ordered by person and resource first, as the daily one, in granules of 1024 rows: the panel's
-- 1000 newest pairs, scattered over the persons, read 669 of 3,302 such granules of the 10M
-- organisation year against 147 of 414 of 8192 rows (about 685,000 rows against 1.2 million), and
-- one person's or one resource's range a few. Computed with the other monthly rollups and
-- superseded the same way; read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.user_resource_rollups_monthly {{on_cluster}}
(
    day                  Date,
    user_key             LowCardinality(String),
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    connector_name       LowCardinality(String),
    user_groups          Array(LowCardinality(String)),
    user_type            LowCardinality(String),
    sessions             UInt64,
    first_start_time     DateTime64(3, 'UTC'),
    last_start_time      DateTime64(3, 'UTC'),
    native_usernames     Array(String),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, user_type, day)
SETTINGS index_granularity = 1024;

INSERT INTO {{db}}.user_resource_rollups_monthly
SELECT toStartOfMonth(day) AS month, user_key, resource_name, resource_technology, connector_name,
       user_groups, user_type, sum(sessions), min(first_start_time), max(last_start_time),
       arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(native_usernames)))), 1, 3),
       now64(3, 'UTC')
FROM {{db}}.user_resource_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, user_key, resource_name, resource_technology, connector_name, user_groups, user_type;
