ALTER TABLE sessionhouse.detection_hits ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `historical` Bool DEFAULT false);

ALTER TABLE sessionhouse.detection_hits ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `pages` Bool DEFAULT false);

ALTER TABLE sessionhouse.detection_hits ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `actor` String DEFAULT '');
