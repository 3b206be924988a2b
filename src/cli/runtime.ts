// Opens what a command needs (logger, API, warehouse) from the configuration, and closes it
// once, in reverse order.
import { ControlPlaneApi } from "../api/control-plane.js";
import type { ApiObserver } from "../api/client.js";
import {
  loadConfig,
  secretsOf,
  type Config,
  type LoadOptions,
} from "../config/index.js";
import { migrate } from "../warehouse/migrate.js";
import { openWarehouse, type Warehouse } from "../warehouse/client.js";
import { createLogger, type Logger } from "../util/logger.js";

export interface GlobalOptions {
  config?: string;
  logLevel?: string;
}

export interface Runtime {
  config: Config;
  logger: Logger;
  warehouse: Warehouse;
  api: ControlPlaneApi;
  close(): Promise<void>;
}

export function configFrom(
  globals: GlobalOptions,
  overrides: LoadOptions["overrides"] = {},
  options: { needsApi?: boolean } = {},
): Config {
  return loadConfig({
    ...options,
    configFile: globals.config,
    overrides: {
      ...(globals.logLevel ? { "log.level": globals.logLevel } : {}),
      ...overrides,
    },
  });
}

export function loggerFor(config: Config): Logger {
  return createLogger({
    level: config.log.level,
    format: config.log.format,
    secrets: secretsOf(config),
  });
}

export async function openRuntime(
  config: Config,
  options: {
    logger?: Logger;
    migrate?: boolean;
    apiObserver?: ApiObserver;
  } = {},
): Promise<Runtime> {
  const logger = options.logger ?? loggerFor(config);
  const warehouse = await openWarehouse(config);
  try {
    if (options.migrate !== false) {
      const { applied } = await migrate(warehouse, {
        retentionDays: config.clickhouse.retentionDays,
        logger,
      });
      if (applied.length > 0)
        logger.info(
          { applied: applied.length, where: warehouse.location },
          "warehouse migrated",
        );
    }
  } catch (err) {
    await warehouse.close();
    throw err;
  }
  const api = ControlPlaneApi.fromConfig(config, logger, options.apiObserver);
  let closed = false;
  return {
    config,
    logger,
    warehouse,
    api,
    close: async () => {
      if (closed) return;
      closed = true;
      await api.close();
      await warehouse.close();
      logger.flush();
    },
  };
}
