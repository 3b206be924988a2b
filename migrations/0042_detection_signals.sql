-- Signals and alerts (docs/detections.md, "Signals and alerts"): every row of detection_hits is a
-- signal, recorded and shown whatever it is; an alert is what pages a person, and only a signal
-- with `pages` set can become one.
--
-- historical: the hit's event was older than the configured age when it arrived (arrived_at -
-- event_time; default the sessions lookback), as every hit of a backfill of past days is: it is
-- history loaded on purpose, recorded and listed, never paged (src/detections/history.ts).
-- pages: the rule compiles to a Grafana alert (severity medium or above, or `alert: true`) and
-- the hit is not historical; the compiled alerts read only these rows.
-- actor: whom the hit is about (a person's e-mail or user key, or the rule's group key); the
-- compiled alerts fire at most one instance per rule and actor.
ALTER TABLE {{db}}.detection_hits {{on_cluster}}
    ADD COLUMN IF NOT EXISTS historical Bool DEFAULT false;

ALTER TABLE {{db}}.detection_hits {{on_cluster}}
    ADD COLUMN IF NOT EXISTS pages Bool DEFAULT false;

ALTER TABLE {{db}}.detection_hits {{on_cluster}}
    ADD COLUMN IF NOT EXISTS actor String DEFAULT '';
