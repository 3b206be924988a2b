ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);

ALTER TABLE sessionhouse.agg_histogram ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);

ALTER TABLE sessionhouse.agg_top_values ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);
