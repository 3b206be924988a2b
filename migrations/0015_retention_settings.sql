-- The TTL each table was last given by the exporter from its retention settings (hot days, cold
-- volume, retention days), with when: the settings are applied again only when they change, and
-- `status` reports them. The latest row per table wins.
CREATE TABLE IF NOT EXISTS {{db}}.retention_settings {{on_cluster}}
(
    table_name      String,
    ttl             String,
    hot_days        UInt32,
    cold_volume     String,
    retention_days  UInt32,
    applied_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(applied_at)
ORDER BY table_name;
