-- Compression codecs of the sessions time columns, measured on a million generated sessions
-- merged to one part (bytes before → after; the default codec is LZ4):
--   start_time   Delta, ZSTD(1)  5.49 MB → 0.01 MB (the table's sort key: consecutive starts
--                                 differ by little on any data)
--   fetched_at   Delta, ZSTD(1)  5.49 MB → 0.01 MB (a read follows its session's start)
--   version      Delta, ZSTD(1)  5.49 MB → 0.02 MB (the fetch time in milliseconds, ranked)
-- Not taken: ZSTD(1) on the address, person, resource and identifier strings halves each of
-- them (sessions 177.5 → 129.9 MB with these three), but the panels that read them over a
-- year of raw rows took 1.3 times as long; `raw` at ZSTD(6) (74.8 → 64.2 MB), its cost on the
-- sync's inserts not measured. Only the codec changes, no type: parts written before keep
-- their codec until their next merge (OPTIMIZE TABLE … FINAL rewrites them now), and an
-- archive exported before restores as it did.
ALTER TABLE {{db}}.sessions {{on_cluster}}
    MODIFY COLUMN start_time DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN fetched_at DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN version UInt64 CODEC(Delta, ZSTD(1));
