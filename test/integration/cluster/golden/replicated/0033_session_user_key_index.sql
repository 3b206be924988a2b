ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD INDEX IF NOT EXISTS idx_user_key user_key TYPE bloom_filter(0.01) GRANULARITY 1);

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MATERIALIZE INDEX idx_user_key);
