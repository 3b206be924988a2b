ALTER TABLE sessionhouse.sessions_local ON CLUSTER sessionhouse_cluster
    (REMOVE TTL);
