CREATE DATABASE IF NOT EXISTS sessionhouse;

CREATE TABLE IF NOT EXISTS sessionhouse.schema_migrations
(
    `version` UInt32,
    `name` String,
    `checksum` String,
    `applied_at` DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY version;
