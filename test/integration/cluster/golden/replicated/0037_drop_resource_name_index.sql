ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (DROP INDEX IF EXISTS idx_resource_name);
