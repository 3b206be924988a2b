-- The monthly rollups per person, per resource and per technology, for _Busiest users_,
-- _Busiest resources_, the user variables and _Sessions started_ over the whole months of a long
-- range (one row per month × person, month × resource, month × technology; `day` is the month's
-- first day). A month's row sums exactly the days of that
-- month rolled up (`rollup_days`, source sessions) from session_rollups_daily (the technology one
-- from session_technology_rollups_daily); the rollup job
-- computes a month again after each computation of one of its days and supersedes the rows the
-- same way as the daily rollups (a key the month no longer holds is written again with
-- sessions = 0); read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.user_rollups_monthly {{on_cluster}}
(
    day              Date,
    user_key         LowCardinality(String),
    user_type        LowCardinality(String),
    sessions         UInt64,
    resources        AggregateFunction(uniq, String),
    duration_ms_sum  UInt64,
    computed_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key);

INSERT INTO {{db}}.user_rollups_monthly
SELECT toStartOfMonth(day) AS month, user_key, any(user_type), sum(sessions),
       uniqState(toString(resource_name)), sum(duration_ms_sum), now64(3, 'UTC')
FROM {{db}}.session_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, user_key;

CREATE TABLE IF NOT EXISTS {{db}}.resource_rollups_monthly {{on_cluster}}
(
    day                  Date,
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    sessions             UInt64,
    users                AggregateFunction(uniq, String),
    last_start_time      DateTime64(3, 'UTC'),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_name, resource_technology);

INSERT INTO {{db}}.resource_rollups_monthly
SELECT toStartOfMonth(day) AS month, resource_name, resource_technology, sum(sessions),
       uniqState(toString(user_key)), max(last_start_time), now64(3, 'UTC')
FROM {{db}}.session_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, resource_name, resource_technology;

CREATE TABLE IF NOT EXISTS {{db}}.technology_rollups_monthly {{on_cluster}}
(
    day                  Date,
    resource_technology  LowCardinality(String),
    sessions             UInt64,
    users                AggregateFunction(uniq, String),
    resources            AggregateFunction(uniq, String),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_technology);

INSERT INTO {{db}}.technology_rollups_monthly
SELECT toStartOfMonth(day) AS month, resource_technology, sum(sessions), uniqMergeState(users),
       uniqMergeState(resources), now64(3, 'UTC')
FROM {{db}}.session_technology_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, resource_technology;

-- The daily rollup per parent session, for _Child sessions by parent_ over long ranges (one row
-- per day × parent session id, of the sessions that name a parent): child sessions, the five
-- smallest resource names (the panel shows the first five of the range's sorted), a person, the
-- first and last child's start. Computed from `sessions FINAL` with session_rollups_daily (the
-- same days, the same `rollup_days` entries) and superseded the same way; read
-- `FINAL … WHERE child_sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.child_session_rollups_daily {{on_cluster}}
(
    day                Date,
    parent_session_id  String,
    child_sessions     UInt64,
    some_resources     Array(String),
    user_key           LowCardinality(String),
    first_start_time   DateTime64(3, 'UTC'),
    last_start_time    DateTime64(3, 'UTC'),
    computed_at        DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, parent_session_id);

INSERT INTO {{db}}.child_session_rollups_daily
SELECT toDate(start_time) AS day, parent_session_id, count(),
       arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5), any(user_key),
       min(start_time), max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND parent_session_id != ''
GROUP BY day, parent_session_id;
