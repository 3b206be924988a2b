ALTER TABLE sessionhouse.sessions
    (REMOVE TTL);
