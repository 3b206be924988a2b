// What a command opens for its work, closed once whatever happens: the warehouse alone (hold,
// windows, report, archive) or the whole runtime with the API (sync, demo).
import type { Config } from "../config/index.js";
import { openWarehouse, type Warehouse } from "../warehouse/client.js";
import { migrate } from "../warehouse/migrate.js";
import { retentionSettings } from "../warehouse/retention.js";
import { openRuntime, type Runtime } from "./runtime.js";

/**
 * Runs `fn` on the warehouse and closes it. "read" goes through the running service's read-only
 * access when the service holds the embedded data directory; "write" is refused then
 * (DATA_DIR_IN_USE), and migrates the warehouse before `fn`.
 */
export async function withWarehouse<T>(
  config: Config,
  access: "read" | "write",
  fn: (w: Warehouse) => Promise<T>,
): Promise<T> {
  const w = await openWarehouse(config, { access });
  try {
    if (access === "write")
      await migrate(w, { retention: retentionSettings(config) });
    return await fn(w);
  } finally {
    await w.close();
  }
}

/** Runs `fn` on the runtime of a command that syncs (openRuntime) and closes it. */
export async function withRuntime<T>(
  config: Config,
  fn: (rt: Runtime) => Promise<T>,
): Promise<T> {
  const rt = await openRuntime(config);
  try {
    return await fn(rt);
  } finally {
    await rt.close();
  }
}
