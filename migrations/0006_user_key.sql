-- Dashboards group and filter sessions by person: the e-mail of a human, the user name of a
-- machine. A LowCardinality column computed at insert makes those GROUP BYs about a third
-- faster than computing it per row at query time (bench/RESULTS.md).
ALTER TABLE {{db}}.sessions {{on_cluster}}
    ADD COLUMN IF NOT EXISTS user_key LowCardinality(String) MATERIALIZED if(user_email != '', user_email, user_username);

ALTER TABLE {{db}}.sessions {{on_cluster}} MATERIALIZE COLUMN user_key;
