-- Two rollups for panels over 30 days.
--
-- The daily rollup of the sessions that named an end user (a machine account acting for a person:
-- end user email or name set), for _Humans acting through machines_ over rolled-up days: one row
-- per day × account (user_key) × resource × technology × connector × the account's groups as the
-- session listed them, so that every filter of the dashboard applies to it: the sessions, and a
-- uniq state of the end users' emails (the non-empty ones). Ordered by account and resource
-- first, so that one account's or one pair's range reads a few granules of each month. Computed
-- from `sessions FINAL` with session_rollups_daily (the same days, the same `rollup_days`
-- entries) and superseded the same way (a key a day no longer holds is written again with
-- sessions = 0); read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.end_user_rollups_daily {{on_cluster}}
(
    day                  Date,
    user_key             LowCardinality(String),
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    connector_name       LowCardinality(String),
    user_groups          Array(LowCardinality(String)),
    sessions             UInt64,
    end_users            AggregateFunction(uniq, String),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(day)
ORDER BY (user_key, resource_name, resource_technology, connector_name, user_groups, day);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`.
INSERT INTO {{db}}.end_user_rollups_daily
SELECT toDate(start_time) AS day, user_key, resource_name, resource_technology, connector_name,
       user_groups, count(), uniqStateIf(end_user_email, end_user_email != ''), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND (end_user_email != '' OR end_user_name != '')
GROUP BY day, user_key, resource_name, resource_technology, connector_name, user_groups;

-- The half-hourly rollup per user type, for _Machine vs human sessions over time_ over rolled-up
-- days with no filter chosen, when its interval is a whole number of half hours (30 minutes over
-- 30 days): one row per day × half hour (its start) × user type, the sessions. Computed from
-- `sessions FINAL` with session_rollups_daily (the same days, the same `rollup_days` entries)
-- and superseded the same way; read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.user_type_rollups_half_hourly {{on_cluster}}
(
    day                  Date,
    half_hour            DateTime('UTC'),
    user_type            LowCardinality(String),
    sessions             UInt64,
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, half_hour, user_type);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`.
INSERT INTO {{db}}.user_type_rollups_half_hourly
SELECT toDate(start_time) AS day, toStartOfInterval(toDateTime(start_time), INTERVAL 1800 second),
       user_type, count(), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
GROUP BY day, toStartOfInterval(toDateTime(start_time), INTERVAL 1800 second), user_type;
