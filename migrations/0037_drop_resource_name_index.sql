-- idx_resource_name (set(1000), GRANULARITY 4: a set per 32,768 sessions) skips nothing the
-- dashboards' resource filter (`resource_name IN (…)`, one chosen resource) reads: `sessions` is
-- ordered by (start_time, id), so every granule of a range holds sessions of nearly every
-- resource. At 2,000 resources (a year of 1M sessions) a granule holds more than 1,000 names
-- and the set stores none; at the demo's 150 it stores them, and EXPLAIN indexes = 1 of every
-- panel filtered on each resource showed it dropping no granule. It only cost inserts and
-- merges; it is dropped.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    DROP INDEX IF EXISTS idx_resource_name;
