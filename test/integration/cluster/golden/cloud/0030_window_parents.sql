ALTER TABLE sessionhouse.stream_windows
    (ADD COLUMN IF NOT EXISTS `parent` String),
    (MODIFY ORDER BY (job, window_start, parent));
