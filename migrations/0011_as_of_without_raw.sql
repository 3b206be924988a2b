-- The as-of views of 0010 without `raw`: they answer what an object was at a time, and the
-- record as received stays in the tables, where Grafana's reader has it held back.
DROP VIEW IF EXISTS {{db}}.users_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.users_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.users_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

DROP VIEW IF EXISTS {{db}}.user_devices_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.user_devices_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.user_devices_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

DROP VIEW IF EXISTS {{db}}.native_users_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.native_users_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.native_users_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

DROP VIEW IF EXISTS {{db}}.native_user_identity_links_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.native_user_identity_links_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.native_user_identity_links_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

DROP VIEW IF EXISTS {{db}}.inventory_columns_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.inventory_columns_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.inventory_columns_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

DROP VIEW IF EXISTS {{db}}.cloud_integrations_as_of {{on_cluster}};
CREATE VIEW IF NOT EXISTS {{db}}.cloud_integrations_as_of {{on_cluster}} AS
SELECT * EXCEPT (is_deleted, version, raw)
FROM {{db}}.cloud_integrations_history FINAL
WHERE is_deleted = 0
  AND valid_from <= {at:DateTime64(3, 'UTC')}
  AND (valid_to IS NULL OR valid_to > {at:DateTime64(3, 'UTC')});

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
  AND (expire_at IS NULL OR expire_at > {at:DateTime64(3, 'UTC')});
