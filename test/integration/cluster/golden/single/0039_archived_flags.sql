ALTER TABLE sessionhouse.sessions
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);

ALTER TABLE sessionhouse.agg_histogram
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);

ALTER TABLE sessionhouse.agg_top_values
    (ADD COLUMN IF NOT EXISTS `archived` Bool DEFAULT false);
