CREATE DATABASE IF NOT EXISTS sessionhouse ON CLUSTER sessionhouse_cluster;

CREATE TABLE IF NOT EXISTS sessionhouse.schema_migrations ON CLUSTER sessionhouse_cluster
(
    `version` UInt32,
    `name` String,
    `checksum` String,
    `applied_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/sessionhouse/schema_migrations', '{shard}-{replica}')
ORDER BY version;
