-- The control plane's other objects, exported as streams with history (README, "Entity
-- streams"). Every stream but policy suspensions keeps two tables:
--
-- <table>: the current state, one row per object id with FINAL. `version` is the time of the
--   read (ms), so the latest read wins; `is_deleted` = 1 once a full listing no longer returned
--   the object (or it was marked for deletion), and FINAL leaves such objects out.
-- <table>_history: one row per content version of an object (`content_hash`, a digest of the
--   normalized record), valid over [valid_from, valid_to); the open version has valid_to NULL.
--   A version is closed by writing its row again with valid_to set and a higher `version`, so
--   FINAL gives one row per (id, valid_from). A disappearance is a row with is_deleted = 1.
--
-- `raw` is the record as received with every secret value removed (never a credential).

-- PolicySuspension: every version kept, one row per (id, content_hash) with FINAL.
CREATE TABLE IF NOT EXISTS {{db}}.policy_suspensions {{on_cluster}}
(
    id               String,
    policy_id        String,
    org_id           String,
    identity_type    LowCardinality(String),
    identity_id      String,
    created_by       String,
    request_id       String,
    suspension_type  LowCardinality(String),
    input_condition  String,
    expire_at        Nullable(DateTime64(3, 'UTC')),
    created_at       DateTime64(3, 'UTC'),
    updated_at       DateTime64(3, 'UTC'),
    content_hash     String,
    observed_at      DateTime64(3, 'UTC'),
    raw              String CODEC(ZSTD(3))
)
ENGINE = ReplacingMergeTree(observed_at)
ORDER BY (id, content_hash);

-- User (UserService/GetUser).
CREATE TABLE IF NOT EXISTS {{db}}.users {{on_cluster}}
(
    id                     String,
    email                  String,
    full_name              String,
    first_name             String,
    last_name              String,
    machine_name           String,
    type                   LowCardinality(String),
    db_username            String,
    group_ids              Array(String),
    termination_protection Bool,
    expire_at              Nullable(DateTime64(3, 'UTC')),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.users_history {{on_cluster}}
(
    id                     String,
    valid_from             DateTime64(3, 'UTC'),
    valid_to               Nullable(DateTime64(3, 'UTC')),
    email                  String,
    full_name              String,
    first_name             String,
    last_name              String,
    machine_name           String,
    type                   LowCardinality(String),
    db_username            String,
    group_ids              Array(String),
    termination_protection Bool,
    expire_at              Nullable(DateTime64(3, 'UTC')),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

-- DesktopDevice (DesktopService/ListUserDevices), per user: id is "<user_id>/<device_id>".
-- last_seen_at is left out of the content hash: it moves on every read.
CREATE TABLE IF NOT EXISTS {{db}}.user_devices {{on_cluster}}
(
    id                        String,
    user_id                   String,
    device_id                 String,
    app_version               String,
    ip_address                String,
    transparent_proxy_enabled Bool,
    model_name                String,
    model_identifier          String,
    model_number              String,
    serial_number             String,
    hardware_uuid             String,
    provisioning_udid         String,
    activation_lock_status    String,
    system_version            String,
    kernel_version            String,
    computer_name             String,
    os_user_name              String,
    last_seen_at              Nullable(DateTime64(3, 'UTC')),
    content_hash              String,
    raw                       String CODEC(ZSTD(3)),
    observed_at               DateTime64(3, 'UTC'),
    is_deleted                UInt8,
    version                   UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.user_devices_history {{on_cluster}}
(
    id                        String,
    valid_from                DateTime64(3, 'UTC'),
    valid_to                  Nullable(DateTime64(3, 'UTC')),
    user_id                   String,
    device_id                 String,
    app_version               String,
    ip_address                String,
    transparent_proxy_enabled Bool,
    model_name                String,
    model_identifier          String,
    model_number              String,
    serial_number             String,
    hardware_uuid             String,
    provisioning_udid         String,
    activation_lock_status    String,
    system_version            String,
    kernel_version            String,
    computer_name             String,
    os_user_name              String,
    last_seen_at              Nullable(DateTime64(3, 'UTC')),
    content_hash              String,
    raw                       String CODEC(ZSTD(3)),
    observed_at               DateTime64(3, 'UTC'),
    is_deleted                UInt8,
    version                   UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

-- NativeUser (ResourceService/ListNativeUsers). The credential variant is kept as its kind and
-- non-secret fields only: no password, API key value, token, private key or `secret`.
CREATE TABLE IF NOT EXISTS {{db}}.native_users {{on_cluster}}
(
    id                     String,
    resource_id            String,
    username               String,
    use_as_default         Bool,
    termination_protection Bool,
    credential_kinds       Array(LowCardinality(String)),
    credential_username    String,
    credential_header      String,
    credential_location    String,
    credential_key_name    String,
    credential_iam_type    String,
    credential_iam_role    String,
    credential_env         String,
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.native_users_history {{on_cluster}}
(
    id                     String,
    valid_from             DateTime64(3, 'UTC'),
    valid_to               Nullable(DateTime64(3, 'UTC')),
    resource_id            String,
    username               String,
    use_as_default         Bool,
    termination_protection Bool,
    credential_kinds       Array(LowCardinality(String)),
    credential_username    String,
    credential_header      String,
    credential_location    String,
    credential_key_name    String,
    credential_iam_type    String,
    credential_iam_role    String,
    credential_env         String,
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

-- NativeUserIdentityLink (ResourceService/ListNativeUserIdentityLinks). The native user's
-- resource and user name are copied from the link's nativeUser, so that a session (which names
-- its resource and native user name) finds its link without another join. identity_type is
-- user, group or resource_hostname; identity_id the id of that one.
CREATE TABLE IF NOT EXISTS {{db}}.native_user_identity_links {{on_cluster}}
(
    id                     String,
    native_user_id         String,
    resource_id            String,
    native_username        String,
    identity_type          LowCardinality(String),
    identity_id            String,
    user_email             String,
    user_full_name         String,
    group_name             String,
    resource_hostname      String,
    termination_protection Bool,
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.native_user_identity_links_history {{on_cluster}}
(
    id                     String,
    valid_from             DateTime64(3, 'UTC'),
    valid_to               Nullable(DateTime64(3, 'UTC')),
    native_user_id         String,
    resource_id            String,
    native_username        String,
    identity_type          LowCardinality(String),
    identity_id            String,
    user_email             String,
    user_full_name         String,
    group_name             String,
    resource_hostname      String,
    termination_protection Bool,
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

-- Inventory (InventoryService/ListInventoryObjects): one row per column or sub-column, whatever
-- object it arrived in (a datastore, db, schema, table, or the column itself), by id.
-- data_labels holds dataLabel and dataLabelV2, distinct and non-empty.
CREATE TABLE IF NOT EXISTS {{db}}.inventory_columns {{on_cluster}}
(
    id                     String,
    kind                   LowCardinality(String),
    resource_id            String,
    resource_name          String,
    datastore_id           String,
    path                   String,
    name                   String,
    data_type              String,
    data_type_oid          Int64,
    data_label             String,
    data_label_v2          String,
    data_labels            Array(String),
    data_label_locked      Bool,
    tags                   Array(String),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    marked_for_deletion_at Nullable(DateTime64(3, 'UTC')),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.inventory_columns_history {{on_cluster}}
(
    id                     String,
    valid_from             DateTime64(3, 'UTC'),
    valid_to               Nullable(DateTime64(3, 'UTC')),
    kind                   LowCardinality(String),
    resource_id            String,
    resource_name          String,
    datastore_id           String,
    path                   String,
    name                   String,
    data_type              String,
    data_type_oid          Int64,
    data_label             String,
    data_label_v2          String,
    data_labels            Array(String),
    data_label_locked      Bool,
    tags                   Array(String),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    marked_for_deletion_at Nullable(DateTime64(3, 'UTC')),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);

-- CloudIntegration (IntegrationCloudService/ListIntegrationClouds), aws or gcp.
-- autodiscovery lists the switches that are on (awsEnableRdsAutodiscovery, …).
CREATE TABLE IF NOT EXISTS {{db}}.cloud_integrations {{on_cluster}}
(
    id                     String,
    name                   String,
    provider               LowCardinality(String),
    active                 Bool,
    account_id             String,
    region                 String,
    project_id             String,
    project_number         Int64,
    role                   String,
    autodiscovery          Array(LowCardinality(String)),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY id;

CREATE TABLE IF NOT EXISTS {{db}}.cloud_integrations_history {{on_cluster}}
(
    id                     String,
    valid_from             DateTime64(3, 'UTC'),
    valid_to               Nullable(DateTime64(3, 'UTC')),
    name                   String,
    provider               LowCardinality(String),
    active                 Bool,
    account_id             String,
    region                 String,
    project_id             String,
    project_number         Int64,
    role                   String,
    autodiscovery          Array(LowCardinality(String)),
    created_at             DateTime64(3, 'UTC'),
    updated_at             DateTime64(3, 'UTC'),
    content_hash           String,
    raw                    String CODEC(ZSTD(3)),
    observed_at            DateTime64(3, 'UTC'),
    is_deleted             UInt8,
    version                UInt64
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (id, valid_from);
