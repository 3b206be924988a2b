ALTER TABLE sessionhouse.sessions
    (DROP INDEX IF EXISTS idx_resource_name);
