CREATE VIEW IF NOT EXISTS sessionhouse.resource_environments ON CLUSTER sessionhouse_cluster
AS SELECT
    key2 AS resource_name,
    argMax(key1, bucket_time) AS environment,
    max(bucket_time) AS last_seen
FROM sessionhouse.agg_histogram
FINAL
WHERE (job = 'resource_environments') AND (level = 2) AND (count > 0)
GROUP BY resource_name;
