-- A stream read per parent (a user's devices, a resource's native users, each user by id) keeps
-- the parents it could not read in stream_windows beside the windows of time: `job` is the
-- stream, the window is empty (both ends at the epoch) and `parent` names the parent. A window
-- of time has parent ''. An operator sees them with `windows list` and skips one with
-- `windows skip STREAM --parent ID`, as a window.
ALTER TABLE {{db}}.stream_windows {{on_cluster}}
    ADD COLUMN IF NOT EXISTS parent String,
    MODIFY ORDER BY (job, window_start, parent);
