-- The daily rollup per client IP address and user type, for the _Client IP addresses_ panel over
-- long ranges and the human side of _Machine accounts used by humans_ (one row per day × address
-- × user type): sessions, a uniq state of the people (user_key, as the panels count them with
-- uniq), the five smallest people (the panels show the first five of the range's people sorted;
-- the five smallest of a range are among the five smallest of its days), the first and last
-- start. Computed from `sessions FINAL` with session_rollups_daily (the same days, the same
-- `rollup_days` entries) and superseded the same way (a key a day no longer holds is written
-- again with sessions = 0); read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.client_ip_rollups_daily {{on_cluster}}
(
    day                Date,
    client_ip_address  String,
    user_type          LowCardinality(String),
    sessions           UInt64,
    users              AggregateFunction(uniq, String),
    some_users         Array(String),
    first_start_time   DateTime64(3, 'UTC'),
    last_start_time    DateTime64(3, 'UTC'),
    computed_at        DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, client_ip_address, user_type);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`; a day whose
-- raw rows the retention deleted has no rows here.
INSERT INTO {{db}}.client_ip_rollups_daily
SELECT toDate(start_time) AS day, client_ip_address, user_type, count(), uniqState(toString(user_key)),
       arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, 5), min(start_time),
       max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
GROUP BY day, client_ip_address, user_type;

-- The daily rollup of the machine accounts' sessions that named no end user, per account and
-- client IP address, for the machine side of _Machine accounts used by humans_ over rolled-up
-- days (one row per day × account × address): sessions, the five smallest resource names (the
-- panel shows the first five of the range's sorted), the first and last start and the id of the
-- session that started last. Computed and superseded with client_ip_rollups_daily.
CREATE TABLE IF NOT EXISTS {{db}}.machine_address_rollups_daily {{on_cluster}}
(
    day                Date,
    user_key           LowCardinality(String),
    client_ip_address  String,
    sessions           UInt64,
    some_resources     Array(String),
    first_start_time   DateTime64(3, 'UTC'),
    last_start_time    DateTime64(3, 'UTC'),
    last_session_id    String,
    computed_at        DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, user_key, client_ip_address);

INSERT INTO {{db}}.machine_address_rollups_daily
SELECT toDate(start_time) AS day, user_key, client_ip_address, count(),
       arraySlice(arraySort(groupUniqArray(toString(resource_name))), 1, 5), min(start_time),
       max(start_time), argMax(id, start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND user_type = 'machine' AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
GROUP BY day, user_key, client_ip_address;
