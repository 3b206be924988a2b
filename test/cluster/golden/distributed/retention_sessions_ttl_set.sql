ALTER TABLE sessionhouse.sessions_local ON CLUSTER sessionhouse_cluster
    (MODIFY TTL toDateTime(start_time) + toIntervalDay(30));
