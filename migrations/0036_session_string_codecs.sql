-- Compression codecs of the sessions strings, end time and duration, measured on a million
-- generated sessions merged (bytes before → after; the default codec is LZ4):
--   the address, person, resource, sidecar, connector and end-user strings, their arrays and
--   low-cardinality columns, `user_key`    ZSTD(1)   about half each (client IP 7.78 → 3.76 MB)
--   end_time      ZSTD(1)   5.44 → 3.23 MB (Delta, ZSTD(1) 3.71 MB: an end does not follow the order)
--   duration_ms   ZSTD(1)   3.31 → 2.40 MB (T64, ZSTD(1) 2.83 MB)
--   sessions      162.4 → 123.4 MB, 39 bytes a session less
-- Not taken: ZSTD(3) on the strings (a tenth smaller, slower to write, no faster to read);
-- ZSTD(1) on `native_username` (three names: LZ4 keeps them in 0.08 MB, ZSTD(1) in 0.48 MB) and
-- on the status and flags (a few kB); `raw` at ZSTD(6) (73.5 → 62.9 MB), which costs an insert
-- about a quarter more CPU. Only the codec changes, no type: parts written before keep their
-- codec until their next merge (OPTIMIZE TABLE … FINAL rewrites them now), and an archive
-- exported before restores as it did.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    MODIFY COLUMN id String CODEC(ZSTD(1)),
    MODIFY COLUMN end_time Nullable(DateTime64(3, 'UTC')) CODEC(ZSTD(1)),
    MODIFY COLUMN duration_ms Nullable(UInt64) CODEC(ZSTD(1)),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN server_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sidecar_id String CODEC(ZSTD(1)),
    MODIFY COLUMN sidecar_name LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN sidecar_technology LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN user_username String CODEC(ZSTD(1)),
    MODIFY COLUMN user_id String CODEC(ZSTD(1)),
    MODIFY COLUMN user_name String CODEC(ZSTD(1)),
    MODIFY COLUMN user_email String CODEC(ZSTD(1)),
    MODIFY COLUMN user_account_type LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(ZSTD(1)),
    MODIFY COLUMN user_external_ids Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_id String CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_name String CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_email String CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_type LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_groups Array(LowCardinality(String)) CODEC(ZSTD(1)),
    MODIFY COLUMN end_user_external_ids Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN resource_type LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN resource_id String CODEC(ZSTD(1)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN connector_id String CODEC(ZSTD(1)),
    MODIFY COLUMN connector_name LowCardinality(String) CODEC(ZSTD(1)),
    MODIFY COLUMN parent_session_id String CODEC(ZSTD(1)),
    MODIFY COLUMN user_key LowCardinality(String) MATERIALIZED if(user_email != '', user_email, user_username) CODEC(ZSTD(1));
