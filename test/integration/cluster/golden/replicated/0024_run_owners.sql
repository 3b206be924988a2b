ALTER TABLE sessionhouse.runs ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `owner_host` LowCardinality(String) DEFAULT '');

ALTER TABLE sessionhouse.runs ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `owner_pid` UInt32 DEFAULT 0);

ALTER TABLE sessionhouse.runs ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `owner_start` String DEFAULT '');
