-- Applied after the migrations when SESSIONHOUSE_RETENTION_DAYS is 0 and a TTL is set.
ALTER TABLE {{db}}.sessions {{on_cluster}} REMOVE TTL;
