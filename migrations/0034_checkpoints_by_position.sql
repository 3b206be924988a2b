-- A stream's checkpoint stays its greatest position when the table merges.
--
-- `checkpoints` was ReplacingMergeTree(updated_at): a merge kept a stream's latest row. A row
-- written later at an older position (a second process that had not stopped yet, passing the
-- writer's check between its read and its write; a hand-made insert) then replaced the greater
-- position once the parts merged, and the stream moved back. The table is rebuilt as
-- ReplacingMergeTree(position), with the same columns and order: a merge keeps a stream's
-- greatest position (of the rows at it, the last written), the row every reader picks.
-- The rows are copied (a few per stream) and the two tables swapped; a checkpoint written by a
-- sync while this runs may stay behind in the old table, and that stream then reads again from
-- its previous position (nothing is lost: the rows are stored again). On a replicated cluster
-- the table keeps the Keeper path it was created under (…/checkpoints_by_position): a later
-- rebuild must give its new table another name.
CREATE TABLE IF NOT EXISTS {{db}}.checkpoints_by_position {{on_cluster}}
(
    stream      String,
    position    DateTime64(3, 'UTC'),
    detail      String,
    updated_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(position)
ORDER BY stream;

-- Every row as it is (not merged on the way in): merges collapse them later, as before.
INSERT INTO {{db}}.checkpoints_by_position
SETTINGS optimize_on_insert = 0
SELECT stream, position, detail, updated_at
FROM {{db}}.checkpoints;

EXCHANGE TABLES {{db}}.checkpoints_by_position AND {{db}}.checkpoints {{on_cluster}};

DROP TABLE IF EXISTS {{db}}.checkpoints_by_position {{on_cluster}};
