-- Detections as code (docs/detections.md): what the rules of detections/ found, and for each
-- hit the sessions behind it.
--
-- detection_hits: one row per rule and hit key with FINAL: the key is the session id for a rule
-- that fires per session, the group value and its time bucket for a rule that counts. A hit is
-- written once: the detections job leaves out the keys the table holds already, so a session
-- read again (a later fetched_at) never fires a second time; a repeated write of the same hit
-- (a retried insert) collapses to one row.
-- `event_time` is when the activity happened (the session's start), `arrived_at` when its data
-- was stored (fetched_at), `detected_at` when the job wrote the hit.
CREATE TABLE IF NOT EXISTS {{db}}.detection_hits {{on_cluster}}
(
    rule_id      LowCardinality(String),
    hit_key      String,
    title        LowCardinality(String),
    severity     LowCardinality(String),
    attack       Array(LowCardinality(String)),
    tags         Array(LowCardinality(String)),
    session_id   String,
    session_ids  Array(String),
    event_time   DateTime64(3, 'UTC'),
    arrived_at   DateTime64(3, 'UTC'),
    detected_at  DateTime64(3, 'UTC'),
    fields       Map(String, String),
    INDEX idx_detected_at detected_at TYPE minmax GRANULARITY 1
)
ENGINE = ReplacingMergeTree(detected_at)
ORDER BY (rule_id, hit_key);
