ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (REMOVE TTL);
