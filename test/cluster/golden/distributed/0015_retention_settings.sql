CREATE TABLE IF NOT EXISTS sessionhouse.retention_settings_local ON CLUSTER sessionhouse_cluster
(
    `table_name` String,
    `ttl` String,
    `hot_days` UInt32,
    `cold_volume` String,
    `retention_days` UInt32,
    `applied_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/retention_settings_local', '{replica}', applied_at)
ORDER BY table_name;

CREATE TABLE IF NOT EXISTS sessionhouse.retention_settings ON CLUSTER sessionhouse_cluster AS sessionhouse.retention_settings_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'retention_settings_local', cityHash64(table_name));
