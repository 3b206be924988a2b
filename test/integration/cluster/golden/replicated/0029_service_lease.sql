CREATE TABLE IF NOT EXISTS sessionhouse.service_lease ON CLUSTER sessionhouse_cluster
(
    `name` LowCardinality(String),
    `owner_id` String,
    `owner_host` LowCardinality(String),
    `owner_pid` UInt32,
    `owner_start` String,
    `command` LowCardinality(String),
    `acquired_at` DateTime64(3, 'UTC'),
    `renewed_at` DateTime64(3, 'UTC'),
    `expires_at` DateTime64(3, 'UTC'),
    `released` UInt8
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/sessionhouse/service_lease', '{replica}')
ORDER BY (name, renewed_at, owner_id)
TTL toDateTime(renewed_at) + toIntervalDay(30);
