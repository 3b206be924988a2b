ALTER TABLE sessionhouse.sessions
    (ADD COLUMN IF NOT EXISTS `user_key` LowCardinality(String) MATERIALIZED if(user_email != '', user_email, user_username));

ALTER TABLE sessionhouse.sessions
    (MATERIALIZE COLUMN user_key);
