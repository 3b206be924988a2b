ALTER TABLE sessionhouse.stream_windows ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `parent` String),
    (MODIFY ORDER BY (job, window_start, parent));
