-- The database and the ledger of applied migrations. Placeholders: {{db}} is the configured
-- database, {{on_cluster}} is empty for one server (kept so a cluster mode can come later).
CREATE DATABASE IF NOT EXISTS {{db}} {{on_cluster}};

CREATE TABLE IF NOT EXISTS {{db}}.schema_migrations {{on_cluster}}
(
    version    UInt32,
    name       String,
    checksum   String,
    applied_at DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY version;
