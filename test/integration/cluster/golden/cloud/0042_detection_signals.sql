ALTER TABLE sessionhouse.detection_hits
    (ADD COLUMN IF NOT EXISTS `historical` Bool DEFAULT false);

ALTER TABLE sessionhouse.detection_hits
    (ADD COLUMN IF NOT EXISTS `pages` Bool DEFAULT false);

ALTER TABLE sessionhouse.detection_hits
    (ADD COLUMN IF NOT EXISTS `actor` String DEFAULT '');
