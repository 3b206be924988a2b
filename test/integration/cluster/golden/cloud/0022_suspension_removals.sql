CREATE TABLE IF NOT EXISTS sessionhouse.policy_suspension_removals
(
    `id` String,
    `removed_at` DateTime64(3, 'UTC'),
    `returned_at` Nullable(DateTime64(3, 'UTC')),
    `observed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (id, removed_at);

DROP VIEW IF EXISTS sessionhouse.policy_suspensions_as_of;

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_as_of
AS SELECT * EXCEPT (content_hash, raw)
FROM
(
    SELECT *
    FROM sessionhouse.policy_suspensions
    FINAL
    WHERE updated_at <= {at:DateTime64(3, 'UTC')}
    ORDER BY
        id ASC,
        updated_at DESC,
        observed_at DESC
    LIMIT 1 BY id
)
WHERE (created_at <= {at:DateTime64(3, 'UTC')}) AND ((expire_at IS NULL) OR (expire_at > {at:DateTime64(3, 'UTC')})) AND (id NOT IN (
    SELECT id
    FROM sessionhouse.policy_suspension_removals
    FINAL
    WHERE (removed_at <= {at:DateTime64(3, 'UTC')}) AND ((returned_at IS NULL) OR (returned_at > {at:DateTime64(3, 'UTC')}))
));

DROP VIEW IF EXISTS sessionhouse.policy_suspensions_latest;

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_latest
AS SELECT
    v.*,
    r.removed_at AS removed_at
FROM
(
    SELECT *
    FROM sessionhouse.policy_suspensions
    FINAL
    ORDER BY
        id ASC,
        updated_at DESC,
        observed_at DESC
    LIMIT 1 BY id
) AS v
LEFT JOIN
(
    SELECT
        id,
        toNullable(max(removed_at)) AS removed_at
    FROM sessionhouse.policy_suspension_removals
    FINAL
    WHERE returned_at IS NULL
    GROUP BY id
) AS r ON r.id = v.id;
