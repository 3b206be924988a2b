CREATE TABLE IF NOT EXISTS sessionhouse.retention_settings ON CLUSTER sessionhouse_cluster
(
    `table_name` String,
    `ttl` String,
    `hot_days` UInt32,
    `cold_volume` String,
    `retention_days` UInt32,
    `applied_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/sessionhouse/retention_settings', '{shard}-{replica}', applied_at)
ORDER BY table_name;
