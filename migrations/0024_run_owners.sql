-- The process that owns a run: its host, pid and start token (src/util/process.ts, boot and
-- start time on Linux, so that a reused pid is not taken for the owner). A run still `running`
-- whose owner on this host is gone is marked `abandoned` by the next command that writes.
-- Rows written before these columns existed have owner_pid 0: their owner cannot be judged.
ALTER TABLE {{db}}.runs {{on_cluster}}
    ADD COLUMN IF NOT EXISTS owner_host LowCardinality(String) DEFAULT '';
ALTER TABLE {{db}}.runs {{on_cluster}}
    ADD COLUMN IF NOT EXISTS owner_pid UInt32 DEFAULT 0;
ALTER TABLE {{db}}.runs {{on_cluster}}
    ADD COLUMN IF NOT EXISTS owner_start String DEFAULT '';
