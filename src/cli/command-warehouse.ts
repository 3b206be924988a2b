// The warehouse a command opens for its work (hold, windows, report, archive), closed once
// whatever happens; commands that sync open the whole runtime with withRuntime (runtime.ts).
import type { Config } from "../config/index.js";
import {
  migrate,
  openWarehouse,
  retentionSettings,
  type RetentionSettings,
  type Warehouse,
} from "../warehouse/index.js";

/**
 * Runs `fn` on the warehouse and closes it. "read" goes through the running service's read-only
 * access when the service holds the embedded data directory; "write" is refused then
 * (DATA_DIR_IN_USE), and migrates the warehouse before `fn`, with the configuration's
 * retention unless `retention` is given.
 */
export async function withWarehouse<T>(
  config: Config,
  access: "read" | "write",
  fn: (w: Warehouse) => Promise<T>,
  retention: RetentionSettings = retentionSettings(config),
): Promise<T> {
  const w = await openWarehouse(config, { access });
  try {
    if (access === "write") await migrate(w, { retention });
    return await fn(w);
  } finally {
    await w.close();
  }
}
