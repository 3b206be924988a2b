CREATE TABLE IF NOT EXISTS sessionhouse.policy_suspension_removals_local ON CLUSTER sessionhouse_cluster
(
    `id` String,
    `removed_at` DateTime64(3, 'UTC'),
    `returned_at` Nullable(DateTime64(3, 'UTC')),
    `observed_at` DateTime64(3, 'UTC')
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/sessionhouse/policy_suspension_removals_local', '{replica}', observed_at)
ORDER BY (id, removed_at);

CREATE TABLE IF NOT EXISTS sessionhouse.policy_suspension_removals ON CLUSTER sessionhouse_cluster AS sessionhouse.policy_suspension_removals_local
ENGINE = Distributed('sessionhouse_cluster', 'sessionhouse', 'policy_suspension_removals_local', cityHash64(id));

DROP VIEW IF EXISTS sessionhouse.policy_suspensions_as_of ON CLUSTER sessionhouse_cluster;

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_as_of ON CLUSTER sessionhouse_cluster
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

DROP VIEW IF EXISTS sessionhouse.policy_suspensions_latest ON CLUSTER sessionhouse_cluster;

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_latest ON CLUSTER sessionhouse_cluster
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
