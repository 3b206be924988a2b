-- What "First seen and unusual" compares a time range with: all the history the exporter has
-- stored, kept small by materialized views on sessions (each insert of sessions adds its rows;
-- merges keep one row per key). Retention does not remove rows here: history reaches back to
-- the first export.
--
-- user_resource_first_seen: one row per user (user_key) and resource, with the start of their
--   first session.
-- user_active_days: one row per user and day (UTC) with a session, with the day's first and
--   last session start.
-- Read both with GROUP BY and min/max (rows of different inserts merge in the background).
CREATE TABLE IF NOT EXISTS {{db}}.user_resource_first_seen {{on_cluster}}
(
    user_key       LowCardinality(String),
    resource_name  LowCardinality(String),
    first_seen     SimpleAggregateFunction(min, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_key, resource_name);

CREATE TABLE IF NOT EXISTS {{db}}.user_active_days {{on_cluster}}
(
    user_key     LowCardinality(String),
    day          Date,
    first_start  SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    last_start   SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (user_key, day);

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.user_resource_first_seen_mv {{on_cluster}}
TO {{db}}.user_resource_first_seen
AS SELECT user_key, resource_name, min(start_time) AS first_seen
FROM {{db}}.sessions
GROUP BY user_key, resource_name;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.user_active_days_mv {{on_cluster}}
TO {{db}}.user_active_days
AS SELECT user_key, toDate(start_time) AS day, min(start_time) AS first_start, max(start_time) AS last_start
FROM {{db}}.sessions
GROUP BY user_key, day;

-- The sessions stored before the views existed.
INSERT INTO {{db}}.user_resource_first_seen
SELECT user_key, resource_name, min(start_time)
FROM {{db}}.sessions
GROUP BY user_key, resource_name;

INSERT INTO {{db}}.user_active_days
SELECT user_key, toDate(start_time), min(start_time), max(start_time)
FROM {{db}}.sessions
GROUP BY user_key, toDate(start_time);
