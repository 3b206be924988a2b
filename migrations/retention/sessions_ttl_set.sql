-- Applied after the migrations when SESSIONHOUSE_RETENTION_DAYS > 0.
ALTER TABLE {{db}}.sessions {{on_cluster}} MODIFY TTL toDateTime(start_time) + INTERVAL {{retention_days}} DAY;
