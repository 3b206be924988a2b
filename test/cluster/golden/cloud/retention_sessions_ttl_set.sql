ALTER TABLE sessionhouse.sessions
    (MODIFY TTL toDateTime(start_time) + toIntervalDay(30));
