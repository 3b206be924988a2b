ALTER TABLE sessionhouse.sessions ON CLUSTER sessionhouse_cluster
    (MODIFY TTL toDateTime(start_time) + toIntervalDay(30));
