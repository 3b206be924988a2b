CREATE TABLE IF NOT EXISTS sessionhouse.resource_people_rollups_daily
(
    `day` Date,
    `resource_id` String,
    `resource_name` LowCardinality(String),
    `sessions` UInt64,
    `persons` AggregateFunction(uniq, String),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_id, resource_name);

CREATE TABLE IF NOT EXISTS sessionhouse.native_user_rollups_daily
(
    `day` Date,
    `resource_name` LowCardinality(String),
    `native_username` String,
    `person_via` LowCardinality(String),
    `person_name` String,
    `person_email` String,
    `sessions` UInt64,
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_name, native_username, person_via, person_name, person_email);

CREATE TABLE IF NOT EXISTS sessionhouse.technology_pair_rollups_daily
(
    `day` Date,
    `resource_technology` LowCardinality(String),
    `user_key` LowCardinality(String),
    `resource_name` LowCardinality(String),
    `user_type` LowCardinality(String),
    `sessions` UInt64,
    `first_start_time` DateTime64(3, 'UTC'),
    `last_start_time` DateTime64(3, 'UTC'),
    `computed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (resource_technology, day, user_key, resource_name);

INSERT INTO sessionhouse.resource_people_rollups_daily SELECT
    day,
    resource_id,
    resource_name,
    sum(n),
    uniqMergeState(p),
    max(last),
    now64(3, 'UTC')
FROM
(
    SELECT
        toDate(start_time) AS day,
        resource_id,
        resource_name,
        count() AS n,
        uniqState(if(end_user_id != '', end_user_id, user_id)) AS p,
        max(start_time) AS last
    FROM sessionhouse.sessions
    FINAL
    WHERE (toDate(start_time) IN (
        SELECT day
        FROM sessionhouse.rollup_days
        FINAL
        WHERE source = 'sessions'
    )) AND ((user_id != '') OR (end_user_id != ''))
    GROUP BY
        day,
        resource_id,
        resource_name
    UNION ALL
    SELECT
        toDate(start_time) AS day,
        resource_id,
        resource_name,
        count() AS n,
        uniqStateIf(person_id, person_id != '') AS p,
        max(start_time) AS last
    FROM sessionhouse.sessions_enriched
    WHERE (toDate(start_time) IN (
        SELECT day
        FROM sessionhouse.rollup_days
        FINAL
        WHERE source = 'sessions'
    )) AND (user_id = '') AND (end_user_id = '')
    GROUP BY
        day,
        resource_id,
        resource_name
)
GROUP BY
    day,
    resource_id,
    resource_name;

INSERT INTO sessionhouse.native_user_rollups_daily SELECT
    toDate(start_time) AS day,
    resource_name,
    native_username,
    person_via,
    person_name,
    person_email,
    count(),
    min(start_time),
    max(start_time),
    now64(3, 'UTC')
FROM sessionhouse.sessions_enriched
WHERE (toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (user_id = '') AND (end_user_id = '') AND (native_username != '')
GROUP BY
    day,
    resource_name,
    native_username,
    person_via,
    person_name,
    person_email;

INSERT INTO sessionhouse.technology_pair_rollups_daily SELECT
    toDate(start_time) AS day,
    resource_technology,
    user_key,
    resource_name,
    any(user_type),
    count(),
    min(start_time),
    max(start_time),
    now64(3, 'UTC')
FROM sessionhouse.sessions
FINAL
WHERE (toDate(start_time) IN (
    SELECT day
    FROM sessionhouse.rollup_days
    FINAL
    WHERE source = 'sessions'
)) AND (resource_technology IN ('llm', 'mcp'))
GROUP BY
    day,
    resource_technology,
    user_key,
    resource_name;
