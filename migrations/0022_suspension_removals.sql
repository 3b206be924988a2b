-- Policy suspensions a complete listing no longer held: removed (revoked) from that read on,
-- until a listing holds them again (returned_at). One row per removal of a suspension; a
-- suspension is not in force over [removed_at, returned_at). A record that could not be read
-- (a dead letter) is never taken as a removal.
CREATE TABLE IF NOT EXISTS {{db}}.policy_suspension_removals {{on_cluster}}
(
    id           String,
    removed_at   DateTime64(3, 'UTC'),
    returned_at  Nullable(DateTime64(3, 'UTC')),
    observed_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (id, removed_at);

-- In force at `at`: the latest version at `at`, created by then, not expired, not removed.
DROP VIEW IF EXISTS {{db}}.policy_suspensions_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.policy_suspensions_as_of {{on_cluster}} AS
SELECT * EXCEPT (content_hash, raw)
FROM
(
    SELECT *
    FROM {{db}}.policy_suspensions FINAL
    WHERE updated_at <= {at:DateTime64(3, 'UTC')}
    ORDER BY id, updated_at DESC, observed_at DESC
    LIMIT 1 BY id
)
WHERE created_at <= {at:DateTime64(3, 'UTC')}
  AND (expire_at IS NULL OR expire_at > {at:DateTime64(3, 'UTC')})
  AND id NOT IN
  (
      SELECT id
      FROM {{db}}.policy_suspension_removals FINAL
      WHERE removed_at <= {at:DateTime64(3, 'UTC')}
        AND (returned_at IS NULL OR returned_at > {at:DateTime64(3, 'UTC')})
  );

-- The latest version of every suspension, and since when it is removed (NULL: listed at the
-- last read). In force at T: created_at <= T, expire_at NULL or after T, removed_at NULL or
-- after T.
DROP VIEW IF EXISTS {{db}}.policy_suspensions_latest {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.policy_suspensions_latest {{on_cluster}} AS
SELECT v.*, r.removed_at AS removed_at
FROM
(
    SELECT *
    FROM {{db}}.policy_suspensions FINAL
    ORDER BY id, updated_at DESC, observed_at DESC
    LIMIT 1 BY id
) AS v
LEFT JOIN
(
    SELECT id, toNullable(max(removed_at)) AS removed_at
    FROM {{db}}.policy_suspension_removals FINAL
    WHERE returned_at IS NULL
    GROUP BY id
) AS r ON r.id = v.id;
