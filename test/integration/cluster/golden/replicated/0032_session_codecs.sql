ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `start_time` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1))),
    (MODIFY COLUMN `fetched_at` DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1))),
    (MODIFY COLUMN `version` UInt64 CODEC(Delta, ZSTD(1)));
