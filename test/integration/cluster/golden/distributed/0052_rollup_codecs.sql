ALTER TABLE sessionhouse.child_session_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `parent_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `child_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `some_resources` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.child_session_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `parent_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `child_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `some_resources` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.client_ip_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `some_users` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.client_ip_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `some_users` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.client_ip_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `some_users` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.client_ip_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `some_users` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.data_label_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `data_label` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `count` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.data_label_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `data_label` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `count` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.end_user_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `end_users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.end_user_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `end_users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.group_resource_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.group_resource_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.group_resource_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.group_resource_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.machine_address_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `some_resources` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.machine_address_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `some_resources` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.machine_resource_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.machine_resource_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `client_ip_address` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_session_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.native_user_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_username` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `person_name` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `person_email` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.native_user_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_username` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `person_name` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `person_email` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.resource_people_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `resource_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `persons` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.resource_people_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `resource_id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `persons` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.resource_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.resource_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.session_keys_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `start_time` DateTime64(3, 'UTC') CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `version` UInt64 CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `is_deleted` UInt8 CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `fetched_at` DateTime64(3, 'UTC') CODEC(T64, ZSTD(1)));

ALTER TABLE sessionhouse.session_keys ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `id` String CODEC(ZSTD(1))),
    (MODIFY COLUMN `start_time` DateTime64(3, 'UTC') CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `version` UInt64 CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `is_deleted` UInt8 CODEC(T64, ZSTD(1))),
    (MODIFY COLUMN `fetched_at` DateTime64(3, 'UTC') CODEC(T64, ZSTD(1)));

ALTER TABLE sessionhouse.session_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `distinct_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `child_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_sum` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_quantiles` AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_sessions` UInt64 DEFAULT 0 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_max` UInt64 DEFAULT 0 CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1)));

ALTER TABLE sessionhouse.session_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `distinct_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `child_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_sum` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_quantiles` AggregateFunction(quantiles(0.5, 0.9, 0.99), Nullable(UInt64)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_sessions` UInt64 DEFAULT 0 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_max` UInt64 DEFAULT 0 CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') DEFAULT toDateTime64(0, 3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1)));

ALTER TABLE sessionhouse.session_technology_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_max` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.session_technology_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_ms_max` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `duration_tdigest` AggregateFunction(quantilesTDigest(0.5, 0.95), Nullable(UInt64)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.technology_pair_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.technology_pair_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.technology_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.technology_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `users` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_resource_rollups_daily_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_usernames` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_resource_rollups_daily ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_usernames` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_resource_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_usernames` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_resource_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `user_groups` Array(LowCardinality(String)) CODEC(ZSTD(1))),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `first_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `last_start_time` DateTime64(3, 'UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `native_usernames` Array(String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_rollups_monthly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `duration_ms_sum` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_rollups_monthly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `resources` AggregateFunction(uniq, String) CODEC(ZSTD(1))),
    (MODIFY COLUMN `duration_ms_sum` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_type_rollups_half_hourly_local ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `half_hour` DateTime('UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));

ALTER TABLE sessionhouse.user_type_rollups_half_hourly ON CLUSTER sessionhouse_cluster
    (MODIFY COLUMN `day` Date CODEC(T64, LZ4)),
    (MODIFY COLUMN `half_hour` DateTime('UTC') CODEC(T64, LZ4)),
    (MODIFY COLUMN `sessions` UInt64 CODEC(T64, LZ4)),
    (MODIFY COLUMN `computed_at` DateTime64(3, 'UTC') CODEC(T64, LZ4));
