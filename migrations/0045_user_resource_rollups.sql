-- The daily rollup per user and resource, for the _Users × resources_ panel over rolled-up days
-- (one row per day × person (user_key) × resource × technology × connector × the person's groups
-- as the session listed them × the person's type, so that every filter of the dashboard applies
-- to it): sessions, the first and last start, and the three smallest database users it ran as
-- (the panel shows the first three of the range's sorted; the three smallest of a range are
-- among the three smallest of its days). Ordered by person and resource first, so that one
-- person's or one resource's range reads a few granules of each month. Computed from
-- `sessions FINAL` with session_rollups_daily (the same days, the same `rollup_days` entries)
-- and superseded the same way (a key a day no longer holds is written again with sessions = 0);
-- read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.user_resource_rollups_daily {{on_cluster}}
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
PARTITION BY toYYYYMM(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, user_type, day);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`; a day whose
-- raw rows the retention deleted has no rows here.
INSERT INTO {{db}}.user_resource_rollups_daily
SELECT toDate(start_time) AS day, user_key, resource_name, resource_technology, connector_name,
       user_groups, user_type,
       count(), min(start_time), max(start_time),
       arraySlice(arraySort(groupUniqArray(native_username)), 1, 3), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
GROUP BY day, user_key, resource_name, resource_technology, connector_name, user_groups, user_type;
