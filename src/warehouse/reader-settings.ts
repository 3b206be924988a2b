// The settings a reader may set: the one allow-list behind the HTTP front's policy for readonly
// requests (every caller of the read access of `sessionhouse run`: the owner's commands and
// Grafana), the settings profile shipped for readers of a ClickHouse server
// (dashboards/provisioning/clickhouse/grafana-reader.sh marks exactly these
// CHANGEABLE_IN_READONLY; doctor checks the profile against this list) and what the exporter's
// own read commands send. Every other setting is refused to a reader, the HTTP interface's own
// (http_zlib_compression_level, send_progress_in_http_headers, …) included, as a readonly = 1
// server refuses them. None names a
// path, a schema file, a URL or a directory, or changes what is read: the integration test
// test/integration/warehouse/reader-settings.test.ts checks each entry against the engine's own
// description in system.settings.
//
// To let readers set one more setting, add one entry here with the reason a reader needs it,
// and the same name to grafana-reader.sh (test/unit/warehouse/reader-settings.test.ts fails
// while the two differ).

/** Each setting a reader may set, with why a reader needs it. */
export const READER_SETTINGS: ReadonlyMap<string, string> = new Map([
  [
    "max_execution_time",
    "the Grafana data source sets its query timeout with it on every query (clickhouse-go adds it from the request's deadline); the HTTP front caps it",
  ],
  [
    "enable_http_compression",
    "@clickhouse/client asks for a compressed answer with it when response compression is on (its default; the exporter's server client and doctor's probe do); it changes only how the answer is encoded on the wire",
  ],
  [
    "output_format_parquet_row_group_size",
    "`archive export` through the running service's read access writes Parquet in row groups of at most 100,000 rows (src/warehouse/archive.ts), so a month is written in bounded memory",
  ],
  [
    "output_format_parquet_row_group_size_bytes",
    "`archive export` through the running service's read access bounds a Parquet row group at 32 MiB, for the same reason",
  ],
  [
    "distributed_product_mode",
    "on a cluster whose tables are distributed, the read commands (status, report, query …) set it to global on every query, as the exporter's own client does: an IN or JOIN subquery over a Distributed table inside a query over another then runs once and is sent to the shards, instead of being refused",
  ],
]);
