CREATE TABLE IF NOT EXISTS sessionhouse.service_lease
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
ENGINE = MergeTree
ORDER BY (name, renewed_at, owner_id)
TTL toDateTime(renewed_at) + toIntervalDay(30);
