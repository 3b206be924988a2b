CREATE TABLE IF NOT EXISTS sessionhouse.legal_holds ON CLUSTER sessionhouse_cluster
(
    `hold_id` String,
    `scope` LowCardinality(String),
    `value` String,
    `reason` String,
    `created_by` String,
    `created_at` DateTime64(3, 'UTC'),
    `until` Nullable(DateTime64(3, 'UTC')),
    `released_at` Nullable(DateTime64(3, 'UTC')),
    `released_by` String,
    `release_reason` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY hold_id;

CREATE TABLE IF NOT EXISTS sessionhouse.legal_hold_events ON CLUSTER sessionhouse_cluster
(
    `at` DateTime64(3, 'UTC'),
    `hold_id` String,
    `action` LowCardinality(String),
    `actor` String,
    `reason` String,
    `rows` UInt64
)
ENGINE = MergeTree
ORDER BY (at, hold_id);

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `legal_hold` Bool);
