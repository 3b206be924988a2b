ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD INDEX IF NOT EXISTS idx_id id TYPE bloom_filter(0.001) GRANULARITY 1);

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD INDEX IF NOT EXISTS idx_parent_session_id parent_session_id TYPE bloom_filter(0.01) GRANULARITY 1);

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MATERIALIZE INDEX idx_id);

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MATERIALIZE INDEX idx_parent_session_id);
