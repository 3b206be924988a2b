CREATE TABLE IF NOT EXISTS sessionhouse.session_polls
(
    `session_id` String,
    `misses` UInt32,
    `vanished` Bool,
    `last_polled_at` DateTime64(3, 'UTC'),
    `last_error` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY session_id;
