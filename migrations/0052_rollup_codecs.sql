-- Compression codecs of the rollups and of `session_keys`, which had the default (LZ4).
-- Integers, days and times take T64 first: it keeps only the bits a block of values uses (a
-- start time within its day, a count, a month's read times).
-- The rollups are read by the panels. Their integers, days and times take T64, LZ4; their
-- strings, arrays and aggregate states ZSTD(1). Their low-cardinality names keep LZ4: a panel's
-- filter (a person, a resource) reads them whole, and ZSTD unpacks them slower.
-- `session_keys` is read by no panel, only by the exporter: T64, ZSTD(1) on its times, ZSTD(1)
-- on its ids.
-- Measured on the org-shaped year of 10,000,000 sessions (bench `scale`,
-- BENCH_SCALE_SHAPE=org), every table merged, bytes before → after:
--   session_rollups_daily          284.6 → 214.6 MB
--   session_keys                   193.4 →  45.8 MB (its ids alone 41.6 → 9.0 MB)
--   user_resource_rollups_daily    182.4 → 122.9 MB
--   group_resource_rollups_daily   164.2 → 123.4 MB
--   client_ip_rollups_daily        129.9 →  88.7 MB
--   the twenty tables with rows  1,455.5 → 963.6 MB, 49.2 bytes a session less
-- OPTIMIZE … FINAL of the twenty took 30.9 s of CPU with LZ4 and 37.2 s with these codecs.
-- The panels over that year (bench `scale`, dashboards part, 30 d and 365 d, three runs each):
-- the sums of their p50s were 16,006 and 29,983 ms, against medians of three rounds with LZ4
-- of 16,058 and 32,278 ms. Panels that read a string column whole were slower: _Client IP
-- addresses_ over 365 d 987–1,056 → 1,187 ms, _Machine accounts used by humans_ 500–564 →
-- 710 ms.
-- Not taken:
--   ZSTD(1) on every column (T64 first on numbers): 897.0 MB. But the panels that filter one
--     person over 365 days were up to 1.5 times as slow (_Session duration_ 301 → 441 ms,
--     _Machine accounts used by humans_ 165 → 280 ms).
--   LZ4HC(9) on every column (T64 first on numbers): `session_rollups_daily` 214.7 MB. But the
--     10M year's load took 1,141 s of CPU against 868 s: every merge packs again, slowly.
-- `session_keys` is ordered by id, so its times follow the ids' order only where the ids do: the
-- simulator's ids begin with the hour, and an id that does not would leave them in random
-- order. T64 does well in both orders: on the 10,000,000 read times in the order of a hash of
-- the id, T64/ZSTD(1) 38.0 MB, ZSTD(1) 45.3 MB, Delta/ZSTD(1) 48.4 MB.
-- Only the codec changes, no type: parts written before keep their codec until their next merge
-- (OPTIMIZE TABLE … FINAL rewrites them now), and an archive exported before restores as it did.
ALTER TABLE {{db}}.child_session_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN parent_session_id String CODEC(ZSTD(1)),
    MODIFY COLUMN child_sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN some_resources Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.client_ip_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN some_users Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.client_ip_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN some_users Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.data_label_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN data_label String CODEC(ZSTD(1)),
    MODIFY COLUMN count UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.end_user_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN end_users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.group_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.group_resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.machine_address_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN some_resources Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_session_id String CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.machine_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN client_ip_address String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_session_id String CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.native_user_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN native_username String CODEC(ZSTD(1)),
    MODIFY COLUMN person_name String CODEC(ZSTD(1)),
    MODIFY COLUMN person_email String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.resource_people_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN resource_id String CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN persons AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.session_keys {{on_cluster}}
    MODIFY COLUMN id String CODEC(ZSTD(1)),
    MODIFY COLUMN start_time DateTime64(3, 'UTC') CODEC(T64, ZSTD(1)),
    MODIFY COLUMN version UInt64 CODEC(T64, ZSTD(1)),
    MODIFY COLUMN is_deleted UInt8 CODEC(T64, ZSTD(1)),
    MODIFY COLUMN fetched_at DateTime64(3, 'UTC') CODEC(T64, ZSTD(1));

ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN distinct_sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN child_sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN duration_ms_sum UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN duration_quantiles AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN duration_sessions UInt64 DEFAULT 0 CODEC(T64, LZ4),
    MODIFY COLUMN duration_ms_max UInt64 DEFAULT 0 CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN duration_tdigest AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1));

ALTER TABLE {{db}}.session_technology_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN duration_sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN duration_ms_max UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN duration_tdigest AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.technology_pair_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.technology_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.user_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN native_usernames Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.user_resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(ZSTD(1)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4),
    MODIFY COLUMN native_usernames Array(String) CODEC(ZSTD(1)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.user_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(ZSTD(1)),
    MODIFY COLUMN duration_ms_sum UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);

ALTER TABLE {{db}}.user_type_rollups_half_hourly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4),
    MODIFY COLUMN half_hour DateTime('UTC') CODEC(T64, LZ4),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4);
