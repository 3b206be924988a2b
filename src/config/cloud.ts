// ClickHouse Cloud by its address: its services are reached at <name>.<region>.clickhouse.cloud.
// The server is asked too (cloud_mode), see src/warehouse/client.ts.

/** The host suffix of ClickHouse Cloud services. */
const CLOUD_HOST_SUFFIX = ".clickhouse.cloud";

export function isCloudHost(url: string): boolean {
  try {
    return new URL(url).hostname.toLowerCase().endsWith(CLOUD_HOST_SUFFIX);
  } catch {
    return false;
  }
}
