CREATE TABLE IF NOT EXISTS sessionhouse.resource_environment_rollups_daily
(
    `day` Date CODEC(T64, LZ4),
    `resource_name` LowCardinality(String),
    `environment` LowCardinality(String),
    `count` UInt64 CODEC(T64, LZ4),
    `last_seen` DateTime('UTC') CODEC(T64, LZ4),
    `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4)
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYear(day)
ORDER BY (day, resource_name, environment);

DROP VIEW IF EXISTS sessionhouse.resource_environments;

CREATE VIEW IF NOT EXISTS sessionhouse.resource_environments
AS SELECT
    resource_name,
    argMax(env, latest) AS environment,
    max(seen) AS last_seen
FROM
(
    SELECT
        resource_name,
        argMax(environment, o) AS env,
        max(o) AS latest,
        max(last_seen) AS seen
    FROM
    (
        SELECT
            resource_name,
            environment,
            last_seen,
            bitShiftLeft(toUInt128(toUnixTimestamp(last_seen)), 64) + cityHash64(environment) AS o
        FROM sessionhouse.resource_environment_rollups_daily
        FINAL
        WHERE count > 0
    )
    GROUP BY resource_name
    UNION ALL
    SELECT
        key2,
        argMax(key1, o),
        max(o),
        max(bucket_time)
    FROM
    (
        SELECT
            key2,
            key1,
            bucket_time,
            bitShiftLeft(toUInt128(toUnixTimestamp(bucket_time)), 64) + cityHash64(key1) AS o
        FROM sessionhouse.agg_histogram
        FINAL
        WHERE (job = 'resource_environments') AND (level = 2) AND (count > 0) AND (toDate(bucket_time) IN (
            SELECT toDate(bucket_time) AS day
            FROM sessionhouse.agg_histogram
            WHERE (job = 'resource_environments') AND (level = 2) AND (day NOT IN (
                SELECT day
                FROM sessionhouse.rollup_days
                FINAL
                WHERE source = 'resource_environments'
            ))
        ))
    )
    GROUP BY key2
)
GROUP BY resource_name;
