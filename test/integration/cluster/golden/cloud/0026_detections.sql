CREATE TABLE IF NOT EXISTS sessionhouse.detection_hits
(
    `rule_id` LowCardinality(String),
    `hit_key` String,
    `title` LowCardinality(String),
    `severity` LowCardinality(String),
    `attack` Array(LowCardinality(String)),
    `tags` Array(LowCardinality(String)),
    `session_id` String,
    `session_ids` Array(String),
    `event_time` DateTime64(3, 'UTC'),
    `arrived_at` DateTime64(3, 'UTC'),
    `detected_at` DateTime64(3, 'UTC'),
    `fields` Map(String, String),
    INDEX idx_detected_at detected_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree(detected_at)
ORDER BY (rule_id, hit_key);
