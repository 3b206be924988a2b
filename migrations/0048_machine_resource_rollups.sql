-- The daily rollup of the machine accounts' sessions that named no end user, per account,
-- resource, technology and client IP address, for the machine side of _Machine accounts used by
-- humans_ over rolled-up days when an environment, technology or resource is chosen (one row
-- per day × account × resource × technology × address): sessions, the first and last start and
-- the id of the session that started last. Ordered by account and resource first, so that one
-- account's or one pair's year reads a few granules. Computed from `sessions FINAL` with
-- machine_address_rollups_daily (the same days, the same `rollup_days` entries) and superseded
-- the same way (a key a day no longer holds is written again with sessions = 0); read
-- `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.machine_resource_rollups_daily {{on_cluster}}
(
    day                  Date,
    user_key             LowCardinality(String),
    resource_name        LowCardinality(String),
    resource_technology  LowCardinality(String),
    client_ip_address    String,
    sessions             UInt64,
    first_start_time     DateTime64(3, 'UTC'),
    last_start_time      DateTime64(3, 'UTC'),
    last_session_id      String,
    computed_at          DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (user_key, resource_name, resource_technology, day, client_ip_address);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`; a day whose
-- raw rows the retention deleted has no rows here.
INSERT INTO {{db}}.machine_resource_rollups_daily
SELECT toDate(start_time) AS day, user_key, resource_name, resource_technology, client_ip_address,
       count(), min(start_time), max(start_time), argMax(id, start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
  AND user_type = 'machine' AND end_user_email = '' AND end_user_name = '' AND client_ip_address != ''
GROUP BY day, user_key, resource_name, resource_technology, client_ip_address;

-- The monthly rollup per client IP address and user type (`day` is the month's first day), over
-- exactly the month's days `rollup_days` holds: the sum of client_ip_rollups_daily's rows (sessions,
-- the people's uniq states merged, the five smallest of the days' five smallest people, the first
-- and last start), for the whole months of a range in _Client IP addresses_ and the human side of
-- _Machine accounts used by humans_. Computed with the other monthly rollups and superseded the
-- same way; read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.client_ip_rollups_monthly {{on_cluster}}
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

INSERT INTO {{db}}.client_ip_rollups_monthly
SELECT toStartOfMonth(day) AS month, client_ip_address, user_type, sum(sessions), uniqMergeState(users),
       arraySlice(arraySort(arrayDistinct(arrayFlatten(groupArray(some_users)))), 1, 5),
       min(first_start_time), max(last_start_time), now64(3, 'UTC')
FROM {{db}}.client_ip_rollups_daily FINAL
WHERE day IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions') AND sessions > 0
GROUP BY month, client_ip_address, user_type;
