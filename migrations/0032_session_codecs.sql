-- Compression codecs of the sessions columns where they pay, measured on a million generated
-- sessions merged to one part (bytes before → after; the default codec is LZ4):
--   start_time   Delta, ZSTD(1)  5.49 MB → 0.01 MB (the table's sort key: consecutive starts
--                                 differ by little on any data)
--   fetched_at   Delta, ZSTD(1)  5.49 MB → 0.01 MB (a read follows its session's start)
--   version      Delta, ZSTD(1)  5.49 MB → 0.02 MB (the fetch time in milliseconds, ranked)
--   end_time     ZSTD(1)         5.44 MB → 3.26 MB
--   id           ZSTD(3)         4.16 MB → 0.66 MB (the generator numbers its ids)
--   the address, person, resource and sidecar strings, ZSTD(1): about half each (client IP
--   7.81 → 3.78 MB, user e-mail 6.86 → 3.23 MB, user name 6.01 → 3.40 MB, …)
-- `duration_ms` (ZSTD(1): 3.31 → 2.28 MB) and `user_groups` (ZSTD(1): 1.64 → 1.26 MB) keep
-- LZ4: little to gain, and the duration and groups panels read them slower. `raw` stays
-- ZSTD(3) (ZSTD(6): 74.8 → 64.2 MB, not taken: its cost on the sync's inserts is not
-- measured). Only the codec changes, no type: parts written before keep their codec until
-- their next merge (OPTIMIZE TABLE … FINAL rewrites them now), and an archive exported before
-- restores as it did.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    MODIFY COLUMN start_time DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN fetched_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN version UInt64 CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN end_time Nullable(DateTime64(3, 'UTC')) CODEC(ZSTD(1)),
    MODIFY COLUMN id String CODEC(ZSTD(3)),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN server_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sidecar_id String CODEC(ZSTD(1)),
    MODIFY COLUMN user_username String CODEC(ZSTD(1)),
    MODIFY COLUMN user_id String CODEC(ZSTD(1)),
    MODIFY COLUMN user_name String CODEC(ZSTD(1)),
    MODIFY COLUMN user_email String CODEC(ZSTD(1)),
    MODIFY COLUMN user_external_ids Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN resource_id String CODEC(ZSTD(1));
