ALTER TABLE sessionhouse.sessions_local ON CLUSTER sessionhouse_cluster
    (DROP INDEX IF EXISTS idx_resource_name);
