// The settings a reader may set: the one allow-list behind the HTTP front's policy for readonly
// requests, the settings profile shipped for readers of a ClickHouse server
// (dashboards/provisioning/clickhouse/grafana-reader.sh marks each CHANGEABLE_IN_READONLY) and
// what the exporter's own read commands send. Every other setting is refused to a reader. None
// names a path, a schema file, a URL or a directory.

/** Each setting a reader may set, with why a reader needs it. */
export const READER_SETTINGS: ReadonlyMap<string, string> = new Map([
  [
    "max_execution_time",
    "the Grafana data source sets its query timeout with it on every query",
  ],
  [
    "distributed_product_mode",
    "on a cluster whose tables are distributed, the read commands (status, report, query …) set it to global on every query, as the exporter's own client does: an IN or JOIN subquery over a Distributed table inside a query over another then runs once and is sent to the shards, instead of being refused",
  ],
]);
