CREATE TABLE IF NOT EXISTS sessionhouse.session_polls ON CLUSTER sessionhouse_cluster
(
    `session_id` String,
    `misses` UInt32,
    `vanished` Bool,
    `last_polled_at` DateTime64(3, 'UTC'),
    `last_error` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/sessionhouse/session_polls', '{shard}-{replica}', updated_at)
ORDER BY session_id;
