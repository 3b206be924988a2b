-- The daily rollup per resource, for _Sessions on resources holding labelled data_ over rolled-up
-- days (one row per day × resource id × resource name): sessions, a uniq state of the people
-- behind them (the panel's `uniq`: the end user or else the user of a brand member's session, the
-- person sessions_enriched finds through the native user's identity link for the others, none
-- when it finds none), the last start. The data labels are not kept: the panel joins the
-- inventory as it is now. Computed from `sessions FINAL` and `sessions_enriched` with
-- session_rollups_daily (the same days, the same `rollup_days` entries) and superseded the same
-- way (a key a day no longer holds is written again with sessions = 0); read
-- `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.resource_people_rollups_daily {{on_cluster}}
(
    day              Date,
    resource_id      String,
    resource_name    LowCardinality(String),
    sessions         UInt64,
    persons          AggregateFunction(uniq, String),
    last_start_time  DateTime64(3, 'UTC'),
    computed_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_id, resource_name);

-- The daily rollup of the sessions made through a native user directly (no brand member), for
-- the _Native users_ dashboard over rolled-up days (one row per day × resource × native user ×
-- the person sessions_enriched finds behind it: how, name, email): sessions, first and last
-- start. Computed and superseded with resource_people_rollups_daily.
CREATE TABLE IF NOT EXISTS {{db}}.native_user_rollups_daily {{on_cluster}}
(
    day               Date,
    resource_name     LowCardinality(String),
    native_username   String,
    person_via        LowCardinality(String),
    person_name       String,
    person_email      String,
    sessions          UInt64,
    first_start_time  DateTime64(3, 'UTC'),
    last_start_time   DateTime64(3, 'UTC'),
    computed_at       DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_name, native_username, person_via, person_name, person_email);

-- The daily rollup per technology, person and resource, for the _AI and LLM activity_ dashboard
-- over rolled-up days (one row per day × technology × user_key × resource): sessions, the
-- person's type, first and last start. Ordered by technology first, so that one technology's
-- year reads its own granules. Computed and superseded with resource_people_rollups_daily.
CREATE TABLE IF NOT EXISTS {{db}}.technology_pair_rollups_daily {{on_cluster}}
(
    day                  Date,
    resource_technology  LowCardinality(String),
    user_key             LowCardinality(String),
    resource_name        LowCardinality(String),
    user_type            LowCardinality(String),
    sessions             UInt64,
    first_start_time     DateTime64(3, 'UTC'),
    last_start_time      DateTime64(3, 'UTC'),
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (resource_technology, day, user_key, resource_name);

-- The days rolled up already whose raw rows are still kept; a day whose raw rows the retention
-- deleted has no rows here.
INSERT INTO {{db}}.resource_people_rollups_daily
SELECT day, resource_id, resource_name, sum(n), uniqMergeState(p), max(last), now64(3, 'UTC')
FROM (
    SELECT toDate(start_time) AS day, resource_id, resource_name, count() AS n,
           uniqState(if(end_user_id != '', end_user_id, user_id)) AS p, max(start_time) AS last
    FROM {{db}}.sessions FINAL
    WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
      AND (user_id != '' OR end_user_id != '')
    GROUP BY day, resource_id, resource_name
    UNION ALL
    SELECT toDate(start_time) AS day, resource_id, resource_name, count() AS n,
           uniqStateIf(person_id, person_id != '') AS p, max(start_time) AS last
    FROM {{db}}.sessions_enriched
    WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
      AND user_id = '' AND end_user_id = ''
    GROUP BY day, resource_id, resource_name
)
GROUP BY day, resource_id, resource_name;

INSERT INTO {{db}}.native_user_rollups_daily
SELECT toDate(start_time) AS day, resource_name, native_username, person_via, person_name,
       person_email, count(), min(start_time), max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions_enriched
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND user_id = '' AND end_user_id = '' AND native_username != ''
GROUP BY day, resource_name, native_username, person_via, person_name, person_email;

INSERT INTO {{db}}.technology_pair_rollups_daily
SELECT toDate(start_time) AS day, resource_technology, user_key, resource_name, any(user_type),
       count(), min(start_time), max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND resource_technology IN ('llm', 'mcp')
GROUP BY day, resource_technology, user_key, resource_name;
