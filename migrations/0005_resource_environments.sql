-- Sessions do not carry their resource's environment; the logs do. The default aggregation job
-- `resource_environments` groups logs by resource.environment and resource.name, and this view
-- turns its latest fetches into a resource → environment map for dashboards' environment filter.
CREATE VIEW IF NOT EXISTS {{db}}.resource_environments {{on_cluster}} AS
SELECT
    key2 AS resource_name,
    argMax(key1, bucket_time) AS environment,
    max(bucket_time) AS last_seen
FROM {{db}}.agg_histogram FINAL
WHERE job = 'resource_environments' AND level = 2 AND count > 0
GROUP BY resource_name;
