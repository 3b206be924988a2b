CREATE VIEW IF NOT EXISTS sessionhouse.users_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.users_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.user_devices_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.user_devices_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.native_users_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.native_users_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.native_user_identity_links_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.native_user_identity_links_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.inventory_columns_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.inventory_columns_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.cloud_integrations_as_of
AS SELECT * EXCEPT (is_deleted, version)
FROM sessionhouse.cloud_integrations_history
FINAL
WHERE (is_deleted = 0) AND (valid_from <= {at:DateTime64(3, 'UTC')}) AND ((valid_to IS NULL) OR (valid_to > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_as_of
AS SELECT * EXCEPT content_hash
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
WHERE (created_at <= {at:DateTime64(3, 'UTC')}) AND ((expire_at IS NULL) OR (expire_at > {at:DateTime64(3, 'UTC')}));

CREATE VIEW IF NOT EXISTS sessionhouse.policy_suspensions_latest
AS SELECT *
FROM sessionhouse.policy_suspensions
FINAL
ORDER BY
    id ASC,
    updated_at DESC,
    observed_at DESC
LIMIT 1 BY id;

CREATE VIEW IF NOT EXISTS sessionhouse.sessions_enriched
AS SELECT
    s.id AS id,
    s.start_time AS start_time,
    s.end_time AS end_time,
    s.duration_ms AS duration_ms,
    s.session_status AS session_status,
    s.client_ip_address AS client_ip_address,
    s.server_ip_address AS server_ip_address,
    s.sidecar_id AS sidecar_id,
    s.sidecar_name AS sidecar_name,
    s.sidecar_technology AS sidecar_technology,
    s.user_type AS user_type,
    s.user_username AS user_username,
    s.user_id AS user_id,
    s.user_name AS user_name,
    s.user_email AS user_email,
    s.user_account_type AS user_account_type,
    s.user_groups AS user_groups,
    s.user_external_ids AS user_external_ids,
    s.end_user_id AS end_user_id,
    s.end_user_name AS end_user_name,
    s.end_user_email AS end_user_email,
    s.end_user_type AS end_user_type,
    s.end_user_groups AS end_user_groups,
    s.end_user_external_ids AS end_user_external_ids,
    s.native_username AS native_username,
    s.resource_type AS resource_type,
    s.resource_id AS resource_id,
    s.resource_name AS resource_name,
    s.resource_technology AS resource_technology,
    s.connector_id AS connector_id,
    s.connector_name AS connector_name,
    s.parent_session_id AS parent_session_id,
    s.raw AS raw,
    s.fetched_at AS fetched_at,
    s.version AS version,
    s.user_key AS user_key,
    (l.link_identity_type IN ('user', 'group')) AND ((l.link_valid_to IS NULL) OR (s.start_time < l.link_valid_to)) AS linked,
    toLowCardinality(multiIf((s.user_id != '') OR (s.end_user_id != ''), 'brand', linked AND (l.link_identity_type = 'user'), 'link_user', linked AND (l.link_identity_type = 'group'), 'link_group', 'none')) AS person_via,
    multiIf(person_via = 'brand', if(s.end_user_id != '', s.end_user_id, s.user_id), (person_via IN ('link_user', 'link_group')), l.link_identity_id, '') AS person_id,
    multiIf(person_via = 'brand', if(s.end_user_id != '', s.end_user_email, s.user_email), person_via = 'link_user', if(l.link_user_email != '', l.link_user_email, u.email), '') AS person_email,
    multiIf(person_via = 'brand', if(s.end_user_id != '', s.end_user_name, s.user_name), person_via = 'link_user', if(l.link_user_full_name != '', l.link_user_full_name, u.full_name), person_via = 'link_group', l.link_group_name, '') AS person_name,
    l.link_id AS link_id,
    inv.labels AS data_labels
FROM
(
    SELECT
        *,
        user_key
    FROM sessionhouse.sessions
    FINAL
) AS s
ASOF LEFT JOIN
(
    SELECT
        id AS link_id,
        resource_id AS link_resource_id,
        native_username AS link_native_username,
        valid_from AS link_valid_from,
        valid_to AS link_valid_to,
        identity_type AS link_identity_type,
        identity_id AS link_identity_id,
        user_email AS link_user_email,
        user_full_name AS link_user_full_name,
        group_name AS link_group_name
    FROM sessionhouse.native_user_identity_links_history
    FINAL
    WHERE (is_deleted = 0) AND (identity_type IN ('user', 'group'))
) AS l ON (s.resource_id = l.link_resource_id) AND (s.native_username = l.link_native_username) AND (s.start_time >= l.link_valid_from)
LEFT JOIN
(
    SELECT
        id AS user_id,
        email,
        full_name
    FROM sessionhouse.users
    FINAL
) AS u ON u.user_id = l.link_identity_id
LEFT JOIN
(
    SELECT
        resource_id,
        arraySort(groupUniqArrayArray(data_labels)) AS labels
    FROM sessionhouse.inventory_columns
    FINAL
    GROUP BY resource_id
) AS inv ON inv.resource_id = s.resource_id;
