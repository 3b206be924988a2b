CREATE TABLE IF NOT EXISTS sessionhouse.sessions_local ON CLUSTER sessionhouse_cluster
(
    `id` String,
    `start_time` DateTime64(3, 'UTC'),
    `end_time` Nullable(DateTime64(3, 'UTC')),
    `duration_ms` Nullable(UInt64),
    `session_status` LowCardinality(String),
    `client_ip_address` String,
    `server_ip_address` String,
    `sidecar_id` String,
    `sidecar_name` LowCardinality(String),
    `sidecar_technology` LowCardinality(String),
    `user_type` LowCardinality(String),
    `user_username` String,
    `user_id` String,
    `user_name` String,
    `user_email` String,
    `user_account_type` LowCardinality(String),
    `user_groups` Array(LowCardinality(String)),
    `user_external_ids` Array(String),
    `end_user_id` String,
    `end_user_name` String,
    `end_user_email` String,
    `end_user_type` LowCardinality(String),
    `end_user_groups` Array(LowCardinality(String)),
    `end_user_external_ids` Array(String),
    `native_username` String,
    `resource_type` LowCardinality(String),
    `resource_id` String,
    `resource_name` LowCardinality(String),
    `resource_technology` LowCardinality(String),
    `connector_id` String,
    `connector_name` LowCardinality(String),
    `parent_session_id` String,
    `raw` String CODEC(ZSTD(3)),
    `fetched_at` DateTime64(3, 'UTC'),
    `version` UInt64,
    INDEX idx_user_email user_email TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_resource_name resource_name TYPE set(1000) GRANULARITY 4,
    INDEX idx_status session_status TYPE set(8) GRANULARITY 1
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/sessions_local', '{replica}', version)
PARTITION BY toYYYYMM(start_time)
ORDER BY (start_time, id)
SETTINGS replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS sessionhouse.sessions ON CLUSTER sessionhouse_cluster AS sessionhouse.sessions_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'sessions_local', cityHash64(id));
