CREATE TABLE IF NOT EXISTS sessionhouse.checkpoints_by_position ON CLUSTER sessionhouse_cluster
(
    `stream` String,
    `position` DateTime64(3, 'UTC'),
    `detail` String,
    `updated_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/checkpoints_by_position', '{replica}', position)
ORDER BY stream;

INSERT INTO sessionhouse.checkpoints_by_position
SETTINGS optimize_on_insert = 0
SELECT
    stream,
    position,
    detail,
    updated_at
FROM sessionhouse.checkpoints;

EXCHANGE TABLES sessionhouse.checkpoints_by_position AND sessionhouse.checkpoints ON CLUSTER sessionhouse_cluster;

DROP TABLE IF EXISTS sessionhouse.checkpoints_by_position ON CLUSTER sessionhouse_cluster;
