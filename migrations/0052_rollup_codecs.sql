-- Compression codecs of the rollups and of `session_keys`, which had the default (LZ4).
-- Integers, days and times take T64 first: it keeps only the bits a block of values uses (a
-- start time within its day, a count, a month's read times).
-- The rollups are read by the panels: their columns are packed with LZ4HC(9), which reads as
-- fast as LZ4. ZSTD(1) packs them smaller but reads slower. Measured on the org-shaped year of
-- 10,000,000 sessions (bench `scale`, BENCH_SCALE_SHAPE=org), every table merged:
--   session_rollups_daily    LZ4 284.6 MB; T64/LZ4HC(9) 214.7 MB; T64/ZSTD(1) 183.9 MB
--   machine_resource_rollups_daily  84.0 MB;        59.0 MB;         52.5 MB
-- The panels over that year (30 d and 365 d, three runs each, two rounds) with ZSTD(1): the
-- sum of their medians 0.93 and 0.96 of LZ4's. But the ones that filter one person over 365
-- days were up to 1.5 times as slow (_Session duration_ 301 → 441 ms, _Machine accounts used
-- by humans_ 165 → 280 ms): a filter reads its key columns whole, and ZSTD unpacks them slower.
-- `session_keys` is read by no panel, only by the exporter: T64/ZSTD(1) on its times, ZSTD(1)
-- on its ids (193.4 → 45.8 MB; the ids alone 41.6 → 9.0 MB, 40.4 with LZ4HC(9)).
-- It is ordered by id, so its times follow the ids' order only where the ids do: the
-- simulator's ids begin with the hour, and an id that does not would leave them in random
-- order. T64 does well in both orders: on the 10,000,000 read times in the order of a hash of
-- the id, T64/ZSTD(1) 38.0 MB, ZSTD(1) 45.3 MB, Delta/ZSTD(1) 48.4 MB.
-- Only the codec changes, no type: parts written before keep their codec until their next merge
-- (OPTIMIZE TABLE … FINAL rewrites them now), and an archive exported before restores as it did.
ALTER TABLE {{db}}.child_session_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN parent_session_id String CODEC(LZ4HC(9)),
    MODIFY COLUMN child_sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN some_resources Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.client_ip_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN client_ip_address String CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN some_users Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.client_ip_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN client_ip_address String CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN some_users Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.data_label_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN job LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN data_label String CODEC(LZ4HC(9)),
    MODIFY COLUMN count UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.end_user_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN connector_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN end_users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.group_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_group LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.group_resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_group LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.machine_address_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN client_ip_address String CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN some_resources Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_session_id String CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.machine_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN client_ip_address String CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_session_id String CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.native_user_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN native_username String CODEC(LZ4HC(9)),
    MODIFY COLUMN person_via LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN person_name String CODEC(LZ4HC(9)),
    MODIFY COLUMN person_email String CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.resource_people_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_id String CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN persons AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.session_keys {{on_cluster}}
    MODIFY COLUMN id String CODEC(ZSTD(1)),
    MODIFY COLUMN start_time DateTime64(3, 'UTC') CODEC(T64, ZSTD(1)),
    MODIFY COLUMN version UInt64 CODEC(T64, ZSTD(1)),
    MODIFY COLUMN is_deleted UInt8 CODEC(T64, ZSTD(1)),
    MODIFY COLUMN fetched_at DateTime64(3, 'UTC') CODEC(T64, ZSTD(1));

ALTER TABLE {{db}}.session_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN connector_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN session_status LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN distinct_sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN child_sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_ms_sum UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_quantiles AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) DEFAULT '' CODEC(LZ4HC(9)),
    MODIFY COLUMN duration_sessions UInt64 DEFAULT 0 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_ms_max UInt64 DEFAULT 0 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_tdigest AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(LZ4HC(9));

ALTER TABLE {{db}}.session_technology_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_ms_max UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN duration_tdigest AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.technology_pair_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.technology_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN users AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.user_resource_rollups_daily {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN connector_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN native_usernames Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.user_resource_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN resource_technology LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN connector_name LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_groups Array(LowCardinality(String)) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN first_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN last_start_time DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN native_usernames Array(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.user_rollups_monthly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_key LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN resources AggregateFunction(uniq, String) CODEC(LZ4HC(9)),
    MODIFY COLUMN duration_ms_sum UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));

ALTER TABLE {{db}}.user_type_rollups_half_hourly {{on_cluster}}
    MODIFY COLUMN day Date CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN half_hour DateTime('UTC') CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN user_type LowCardinality(String) CODEC(LZ4HC(9)),
    MODIFY COLUMN sessions UInt64 CODEC(T64, LZ4HC(9)),
    MODIFY COLUMN computed_at DateTime64(3, 'UTC') CODEC(T64, LZ4HC(9));
