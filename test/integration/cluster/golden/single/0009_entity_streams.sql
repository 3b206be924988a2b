CREATE TABLE IF NOT EXISTS sessionhouse.policy_suspensions
(
    `id` String,
    `policy_id` String,
    `org_id` String,
    `identity_type` LowCardinality(String),
    `identity_id` String,
    `created_by` String,
    `request_id` String,
    `suspension_type` LowCardinality(String),
    `input_condition` String,
    `expire_at` Nullable(DateTime64(3, 'UTC')),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `observed_at` DateTime64(3, 'UTC'),
    `raw` String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (id, content_hash);

CREATE TABLE IF NOT EXISTS sessionhouse.users
(
    `id` String,
    `email` String,
    `full_name` String,
    `first_name` String,
    `last_name` String,
    `machine_name` String,
    `type` LowCardinality(String),
    `db_username` String,
    `group_ids` Array(String),
    `termination_protection` Bool,
    `expire_at` Nullable(DateTime64(3, 'UTC')),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.users_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `email` String,
    `full_name` String,
    `first_name` String,
    `last_name` String,
    `machine_name` String,
    `type` LowCardinality(String),
    `db_username` String,
    `group_ids` Array(String),
    `termination_protection` Bool,
    `expire_at` Nullable(DateTime64(3, 'UTC')),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

CREATE TABLE IF NOT EXISTS sessionhouse.user_devices
(
    `id` String,
    `user_id` String,
    `device_id` String,
    `app_version` String,
    `ip_address` String,
    `transparent_proxy_enabled` Bool,
    `model_name` String,
    `model_identifier` String,
    `model_number` String,
    `serial_number` String,
    `hardware_uuid` String,
    `provisioning_udid` String,
    `activation_lock_status` String,
    `system_version` String,
    `kernel_version` String,
    `computer_name` String,
    `os_user_name` String,
    `last_seen_at` Nullable(DateTime64(3, 'UTC')),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.user_devices_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `user_id` String,
    `device_id` String,
    `app_version` String,
    `ip_address` String,
    `transparent_proxy_enabled` Bool,
    `model_name` String,
    `model_identifier` String,
    `model_number` String,
    `serial_number` String,
    `hardware_uuid` String,
    `provisioning_udid` String,
    `activation_lock_status` String,
    `system_version` String,
    `kernel_version` String,
    `computer_name` String,
    `os_user_name` String,
    `last_seen_at` Nullable(DateTime64(3, 'UTC')),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

CREATE TABLE IF NOT EXISTS sessionhouse.native_users
(
    `id` String,
    `resource_id` String,
    `username` String,
    `use_as_default` Bool,
    `termination_protection` Bool,
    `credential_kinds` Array(LowCardinality(String)),
    `credential_username` String,
    `credential_header` String,
    `credential_location` String,
    `credential_key_name` String,
    `credential_iam_type` String,
    `credential_iam_role` String,
    `credential_env` String,
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.native_users_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `resource_id` String,
    `username` String,
    `use_as_default` Bool,
    `termination_protection` Bool,
    `credential_kinds` Array(LowCardinality(String)),
    `credential_username` String,
    `credential_header` String,
    `credential_location` String,
    `credential_key_name` String,
    `credential_iam_type` String,
    `credential_iam_role` String,
    `credential_env` String,
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

CREATE TABLE IF NOT EXISTS sessionhouse.native_user_identity_links
(
    `id` String,
    `native_user_id` String,
    `resource_id` String,
    `native_username` String,
    `identity_type` LowCardinality(String),
    `identity_id` String,
    `user_email` String,
    `user_full_name` String,
    `group_name` String,
    `resource_hostname` String,
    `termination_protection` Bool,
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.native_user_identity_links_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `native_user_id` String,
    `resource_id` String,
    `native_username` String,
    `identity_type` LowCardinality(String),
    `identity_id` String,
    `user_email` String,
    `user_full_name` String,
    `group_name` String,
    `resource_hostname` String,
    `termination_protection` Bool,
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

CREATE TABLE IF NOT EXISTS sessionhouse.inventory_columns
(
    `id` String,
    `kind` LowCardinality(String),
    `resource_id` String,
    `resource_name` String,
    `datastore_id` String,
    `path` String,
    `name` String,
    `data_type` String,
    `data_type_oid` Int64,
    `data_label` String,
    `data_label_v2` String,
    `data_labels` Array(String),
    `data_label_locked` Bool,
    `tags` Array(String),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `marked_for_deletion_at` Nullable(DateTime64(3, 'UTC')),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.inventory_columns_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `kind` LowCardinality(String),
    `resource_id` String,
    `resource_name` String,
    `datastore_id` String,
    `path` String,
    `name` String,
    `data_type` String,
    `data_type_oid` Int64,
    `data_label` String,
    `data_label_v2` String,
    `data_labels` Array(String),
    `data_label_locked` Bool,
    `tags` Array(String),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `marked_for_deletion_at` Nullable(DateTime64(3, 'UTC')),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

CREATE TABLE IF NOT EXISTS sessionhouse.cloud_integrations
(
    `id` String,
    `name` String,
    `provider` LowCardinality(String),
    `active` Bool,
    `account_id` String,
    `region` String,
    `project_id` String,
    `project_number` Int64,
    `role` String,
    `autodiscovery` Array(LowCardinality(String)),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS sessionhouse.cloud_integrations_history
(
    `id` String,
    `valid_from` DateTime64(3, 'UTC'),
    `valid_to` Nullable(DateTime64(3, 'UTC')),
    `name` String,
    `provider` LowCardinality(String),
    `active` Bool,
    `account_id` String,
    `region` String,
    `project_id` String,
    `project_number` Int64,
    `role` String,
    `autodiscovery` Array(LowCardinality(String)),
    `created_at` DateTime64(3, 'UTC'),
    `updated_at` DateTime64(3, 'UTC'),
    `content_hash` String,
    `raw` String CODEC(ZSTD(3)),
    `observed_at` DateTime64(3, 'UTC'),
    `is_deleted` UInt8,
    `version` UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);
