-- Legal holds: sessions a hold names are never deleted by the retention.
--
-- legal_holds: one row per hold (the latest row per hold_id wins): what it holds (`scope` user,
-- resource or session, and `value`: a user_key, a resource name or a session id, whose child
-- sessions it holds too), who placed it, why, when, until when (NULL: until released), and its
-- release. A hold is active while it is not released and its `until` has not passed.
CREATE TABLE IF NOT EXISTS {{db}}.legal_holds {{on_cluster}}
(
    hold_id         String,
    scope           LowCardinality(String),
    value           String,
    reason          String,
    created_by      String,
    created_at      DateTime64(3, 'UTC'),
    until           Nullable(DateTime64(3, 'UTC')),
    released_at     Nullable(DateTime64(3, 'UTC')),
    released_by     String,
    release_reason  String,
    updated_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY hold_id;

-- Every change of a hold (added, released) and every application of the holds to the stored
-- sessions, with who, why and how many session rows it flagged or unflagged.
CREATE TABLE IF NOT EXISTS {{db}}.legal_hold_events {{on_cluster}}
(
    at        DateTime64(3, 'UTC'),
    hold_id   String,
    action    LowCardinality(String),
    actor     String,
    reason    String,
    rows      UInt64
)
ENGINE = MergeTree
ORDER BY (at, hold_id);

-- The hold flag of a session row: set by the writer for sessions an active hold names, and by
-- `hold add`/`hold release` and the rollups job on the rows already stored. The retention's
-- TTL deletes only rows where it is false.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD COLUMN IF NOT EXISTS legal_hold Bool;
