-- The re-read of open sessions through GetSession, for the sessions it answered `not_found`.
--
-- session_polls: one row per session GetSession answered `not_found` at least once; the latest
-- row of a session wins. `misses` counts `not_found` answers in a row (a successful read writes
-- 0); at `sessions.vanishAfterMisses` the session is `vanished` and is not asked for again. Its
-- last row in `sessions` stays as it was stored.
CREATE TABLE IF NOT EXISTS {{db}}.session_polls {{on_cluster}}
(
    session_id      String,
    misses          UInt32,
    vanished        Bool,
    last_polled_at  DateTime64(3, 'UTC'),
    last_error      String,
    updated_at      DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(updated_at)
ORDER BY session_id;
