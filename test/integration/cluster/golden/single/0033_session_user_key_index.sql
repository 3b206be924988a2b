ALTER TABLE sessionhouse.sessions
    (ADD INDEX IF NOT EXISTS idx_user_key user_key TYPE bloom_filter(0.01) GRANULARITY 1);

ALTER TABLE sessionhouse.sessions
    (MATERIALIZE INDEX idx_user_key);
