-- Checkpoints: how far each stream's data is known to be in ClickHouse. Written only after the
-- rows it covers were inserted; the latest row of a stream wins.
CREATE TABLE IF NOT EXISTS {{db}}.checkpoints {{on_cluster}}
(
    stream      String,
    position    DateTime64(3, 'UTC'),
    detail      String,
    updated_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY stream;

-- Records that could not be stored as rows, with the reason and the raw text as received.
-- One row per distinct record and job (`record_hash`), however often it was fetched again.
CREATE TABLE IF NOT EXISTS {{db}}.dead_letters {{on_cluster}}
(
    job          LowCardinality(String),
    record_hash  String,
    record_id    String,
    reason       String,
    raw          String CODEC(ZSTD(3)),
    seen_at      DateTime64(3, 'UTC'),
    run_id       String
)
ENGINE = ReplacingMergeTree(seen_at)
ORDER BY (job, record_hash)
SETTINGS non_replicated_deduplication_window = 10000;

-- One row per run of a job (rewritten when it ends), for the exporter-health dashboard.
CREATE TABLE IF NOT EXISTS {{db}}.runs {{on_cluster}}
(
    run_id         String,
    job            LowCardinality(String),
    started_at     DateTime64(3, 'UTC'),
    finished_at    Nullable(DateTime64(3, 'UTC')),
    status         LowCardinality(String),
    pages          UInt64,
    rows_inserted  UInt64,
    dead_letters   UInt64,
    retries        UInt64,
    error          String,
    updated_at     DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
PARTITION BY toYYYYMM(started_at)
ORDER BY (job, started_at, run_id)
TTL toDateTime(started_at) + INTERVAL 400 DAY;
