// `sessionhouse migrate`: creates or upgrades the ClickHouse tables on their own; every sync and
// `run` does the same before it starts.
import type { Command } from "commander";
import {
  migrate,
  openWarehouse,
  retentionSettings,
} from "../../warehouse/index.js";
import {
  configFrom,
  loggerFor,
  WRITES_DATA_DIR,
  type GlobalOptions,
} from "../runtime.js";

export function registerMigrateCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  program
    .command("migrate")
    .description(
      "create or upgrade the ClickHouse tables (also done before every sync)",
    )
    .addHelpText("after", WRITES_DATA_DIR)
    .action(async () => {
      await runMigrate(globals());
    });
}

async function runMigrate(globals: GlobalOptions): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const logger = loggerFor(config);
  const w = await openWarehouse(config, { logger });
  try {
    const r = await migrate(w, {
      retention: retentionSettings(config),
      logger,
    });
    process.stdout.write(
      `${w.database} at ${w.location}: ${r.applied.length} migration(s) applied, ${r.alreadyApplied} already in place\n`,
    );
  } finally {
    await w.close();
  }
}
