-- The service lease: which process runs the jobs against this database (src/warehouse/lease.ts,
-- docs/scale-out.md "Two processes on one database"). One row per claim, renewal or release;
-- nothing is replaced: the holder is read from every owner's latest row. An owner is one
-- process (`owner_id`, random per process start) with its host, pid and start token as in
-- `runs` (src/util/process.ts). Every time is the server's clock (now64), never a client's:
-- `acquired_at` is when the owner's tenure began, `renewed_at` when the row was written,
-- `expires_at` when the claim lapses unless renewed; `released` = 1 ends it at once.
CREATE TABLE IF NOT EXISTS {{db}}.service_lease {{on_cluster}}
(
    name         LowCardinality(String),
    owner_id     String,
    owner_host   LowCardinality(String),
    owner_pid    UInt32,
    owner_start  String,
    command      LowCardinality(String),
    acquired_at  DateTime64(3, 'UTC'),
    renewed_at   DateTime64(3, 'UTC'),
    expires_at   DateTime64(3, 'UTC'),
    released     UInt8
)
ENGINE = MergeTree
ORDER BY (name, renewed_at, owner_id)
TTL toDateTime(renewed_at) + INTERVAL 30 DAY;
