-- One session, one row under FINAL, whatever changes between two reads, its start time included.
--
-- `sessions` is ordered by (start_time, id), which keeps the dashboards' time-range reads fast,
-- so a session whose start time differs between two reads (a correction; the list answer and
-- GetSession disagreeing) is stored under two keys, and FINAL keeps both. The table is rebuilt
-- as ReplacingMergeTree(version, is_deleted), with the same columns, indexes, partitions and
-- order: the exporter writes, for a key a session no longer has, a tombstone (a copy of that
-- key's row with is_deleted = 1 and a higher version), and FINAL drops a key whose latest row
-- is one. A read is never a tombstone (is_deleted defaults to 0).
--
-- The rebuild moves the stored parts (ATTACH PARTITION … FROM hard-links them, nothing is
-- copied) and swaps the two tables; run it while no sync is writing. The TTL of the retention
-- and the merge setting are given to the new table by `migrate` after the files have run. On a
-- replicated cluster the table keeps the Keeper path it was created under (…/sessions_rebuilt):
-- a later rebuild must give its new table another name.

-- The first-seen views are created again below: they skip tombstones.
DROP VIEW IF EXISTS {{db}}.user_resource_first_seen_mv {{on_cluster}};

DROP VIEW IF EXISTS {{db}}.user_active_days_mv {{on_cluster}};

ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD COLUMN IF NOT EXISTS is_deleted UInt8 DEFAULT 0;

CREATE TABLE IF NOT EXISTS {{db}}.sessions_rebuilt {{on_cluster}}
(
    id                       String,
    start_time               DateTime64(3, 'UTC'),
    end_time                 Nullable(DateTime64(3, 'UTC')),
    duration_ms              Nullable(UInt64),
    session_status           LowCardinality(String),
    client_ip_address        String,
    server_ip_address        String,
    sidecar_id               String,
    sidecar_name             LowCardinality(String),
    sidecar_technology       LowCardinality(String),
    user_type                LowCardinality(String),
    user_username            String,
    user_id                  String,
    user_name                String,
    user_email               String,
    user_account_type        LowCardinality(String),
    user_groups              Array(LowCardinality(String)),
    user_external_ids        Array(String),
    end_user_id              String,
    end_user_name            String,
    end_user_email           String,
    end_user_type            LowCardinality(String),
    end_user_groups          Array(LowCardinality(String)),
    end_user_external_ids    Array(String),
    native_username          String,
    resource_type            LowCardinality(String),
    resource_id              String,
    resource_name            LowCardinality(String),
    resource_technology      LowCardinality(String),
    connector_id             String,
    connector_name           LowCardinality(String),
    parent_session_id        String,
    raw                      String CODEC(ZSTD(3)),
    fetched_at               DateTime64(3, 'UTC'),
    version                  UInt64,
    user_key                 LowCardinality(String) MATERIALIZED if(user_email != '', user_email, user_username),
    legal_hold               Bool,
    is_deleted               UInt8 DEFAULT 0,
    INDEX idx_user_email user_email TYPE bloom_filter(0.01) GRANULARITY 4,
    INDEX idx_resource_name resource_name TYPE set(1000) GRANULARITY 4,
    INDEX idx_status session_status TYPE set(8) GRANULARITY 1,
    INDEX idx_id id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_parent_session_id parent_session_id TYPE bloom_filter(0.01) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version, is_deleted)
PARTITION BY toYYYYMM(start_time)
ORDER BY (start_time, id)
SETTINGS non_replicated_deduplication_window = 10000;

ALTER TABLE {{db}}.sessions_rebuilt {{on_cluster}}
    ATTACH PARTITION ALL FROM {{db}}.sessions;

EXCHANGE TABLES {{db}}.sessions_rebuilt AND {{db}}.sessions {{on_cluster}};

DROP TABLE IF EXISTS {{db}}.sessions_rebuilt {{on_cluster}};

-- session_keys: every key (id, start time) a session is stored under, with the latest version
-- and whether that is a tombstone, and when it was read. Small (no record), ordered by id, so
-- the exporter finds the sessions stored under more than one live key among those read since a
-- given instant without reading `sessions` (src/warehouse/session-keys.ts). Partitioned by the
-- month of the read, and with the range of read times of every granule, so that instant bounds
-- what is read (parts merged before it are skipped whole); rows of one key in several months
-- are read together.
CREATE TABLE IF NOT EXISTS {{db}}.session_keys {{on_cluster}}
(
    id          String,
    start_time  DateTime64(3, 'UTC'),
    version     UInt64,
    is_deleted  UInt8,
    fetched_at  DateTime64(3, 'UTC'),
    INDEX idx_fetched_at fetched_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(fetched_at)
ORDER BY (id, start_time);

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.session_keys_mv {{on_cluster}}
TO {{db}}.session_keys
AS SELECT id, start_time, version, is_deleted, fetched_at
FROM {{db}}.sessions;

INSERT INTO {{db}}.session_keys
SELECT id, start_time, version, is_deleted, fetched_at
FROM {{db}}.sessions;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.user_resource_first_seen_mv {{on_cluster}}
TO {{db}}.user_resource_first_seen
AS SELECT user_key, resource_name, min(start_time) AS first_seen
FROM {{db}}.sessions
WHERE is_deleted = 0
GROUP BY user_key, resource_name;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.user_active_days_mv {{on_cluster}}
TO {{db}}.user_active_days
AS SELECT user_key, toDate(start_time) AS day, min(start_time) AS first_start, max(start_time) AS last_start
FROM {{db}}.sessions
WHERE is_deleted = 0
GROUP BY user_key, day;
