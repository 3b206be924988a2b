-- The archive flag of a row: set by `archive export` on the rows of a month it has written and
-- read back (src/pipeline/archive.ts), those fetched before the export began. With an archive
-- directory configured (SESSIONHOUSE_ARCHIVE_DIR) the retention's TTL deletes only rows where it
-- is true, so no row goes before its month is archived (src/warehouse/retention.ts).
ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD COLUMN IF NOT EXISTS archived Bool DEFAULT false;

ALTER TABLE {{db}}.agg_histogram {{on_cluster}}
    ADD COLUMN IF NOT EXISTS archived Bool DEFAULT false;

ALTER TABLE {{db}}.agg_top_values {{on_cluster}}
    ADD COLUMN IF NOT EXISTS archived Bool DEFAULT false;
