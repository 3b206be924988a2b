-- Session detail reads one session, its parent and its children by id, while sessions are
-- ordered by (start_time, id): bloom filters on id and parent_session_id let such a read skip
-- the granules that cannot hold the id instead of scanning every session.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD INDEX IF NOT EXISTS idx_id id TYPE bloom_filter(0.001) GRANULARITY 1;

ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD INDEX IF NOT EXISTS idx_parent_session_id parent_session_id TYPE bloom_filter(0.01) GRANULARITY 1;

ALTER TABLE {{db}}.sessions {{on_cluster}} MATERIALIZE INDEX idx_id;

ALTER TABLE {{db}}.sessions {{on_cluster}} MATERIALIZE INDEX idx_parent_session_id;
