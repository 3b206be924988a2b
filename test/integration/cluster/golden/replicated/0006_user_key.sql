ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (ADD COLUMN IF NOT EXISTS `user_key` LowCardinality(String) MATERIALIZED if(user_email != '', user_email, user_username));

ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MATERIALIZE COLUMN user_key);
