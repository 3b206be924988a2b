-- The daily rollup per client IP address, for the _Client IP addresses_ panel over long ranges
-- (one row per day × address): sessions, a uniq state of the people (user_key, as the panel
-- counts them with uniq), the five smallest people (the panel shows the first five of the
-- range's people sorted; the five smallest of a range are among the five smallest of its
-- days), the first and last start. Computed from `sessions FINAL` with session_rollups_daily
-- (the same days, the same `rollup_days` entries) and superseded the same way (an address a day
-- no longer holds is written again with sessions = 0); read `FINAL … WHERE sessions > 0`.
CREATE TABLE IF NOT EXISTS {{db}}.client_ip_rollups_daily {{on_cluster}}
(
    day                Date,
    client_ip_address  String,
    sessions           UInt64,
    users              AggregateFunction(uniq, String),
    some_users         Array(String),
    first_start_time   DateTime64(3, 'UTC'),
    last_start_time    DateTime64(3, 'UTC'),
    computed_at        DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, client_ip_address);

-- The days rolled up already whose raw rows are still kept, from `sessions FINAL`; a day whose
-- raw rows the retention deleted has no rows here.
INSERT INTO {{db}}.client_ip_rollups_daily
SELECT toDate(start_time) AS day, client_ip_address, count(), uniqState(toString(user_key)),
       arraySlice(arraySort(groupUniqArray(toString(user_key))), 1, 5), min(start_time),
       max(start_time), now64(3, 'UTC')
FROM {{db}}.sessions FINAL
WHERE toDate(start_time) IN (SELECT day FROM {{db}}.rollup_days FINAL WHERE source = 'sessions')
GROUP BY day, client_ip_address;
