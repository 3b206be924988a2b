-- The dashboards' user filter (`user_key IN (…)`, one chosen user) reads sessions ordered by
-- (start_time, id), where one user's sessions lie in a fraction of the granules of a range: a
-- bloom filter on user_key lets such a read skip the others instead of scanning every session of
-- the range (at a year of 1M sessions, 21 of 132 granules for the busiest user of the last day;
-- about 1.2 bytes a session). The resource and client address filters get none: at enterprise
-- sizes nearly every granule holds the busiest resource, and an address's sessions spread as
-- widely, so such an index would skip next to nothing.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD INDEX IF NOT EXISTS idx_user_key user_key TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE {{db}}.sessions {{on_cluster}} MATERIALIZE INDEX idx_user_key;
