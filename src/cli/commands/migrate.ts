// `sessionhouse migrate`: creates or upgrades the ClickHouse tables on their own; every sync and
// `run` does the same before it starts. --dry-run prints the statements it would run instead.
import {
  migrate,
  openWarehouse,
  pendingMigrations,
  retentionSettings,
  type Warehouse,
} from "../../warehouse/index.js";
import { configFrom, loggerFor, type GlobalOptions } from "../runtime.js";
import { counted } from "../output.js";

interface MigrateOptions {
  dryRun?: boolean;
  to?: number;
}

export async function runMigrate(
  globals: GlobalOptions,
  o: MigrateOptions,
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const logger = loggerFor(config);
  const w = await openWarehouse(config, { logger });
  try {
    if (o.dryRun) {
      await printPlan(w, o.to);
      return;
    }
    const r = await migrate(w, {
      retention: retentionSettings(config),
      logger,
      to: o.to,
    });
    process.stdout.write(
      `${w.database} at ${w.location}: ${counted(r.applied.length, "migration")} applied, ${r.alreadyApplied} already in place\n`,
    );
  } finally {
    await w.close();
  }
}

/** What `migrate` would run: each pending file, then its statements as rendered for the mode. */
async function printPlan(w: Warehouse, to: number | undefined): Promise<void> {
  const pending = await pendingMigrations(w, { to });
  const out: string[] = [
    `-- ${w.database} at ${w.location}: ${counted(pending.length, "migration")} pending (dry run: nothing was written)`,
  ];
  for (const { file, statements } of pending) {
    const done = statements.filter((s) => s.done).length;
    out.push(
      "",
      `-- ${file.name}: ${statements.length} statement(s)` +
        (done ? `, ${done} already applied by an interrupted run` : ""),
    );
    for (const s of statements)
      out.push(
        s.done ? `-- statement ${s.index + 1}: already applied` : `${s.sql};`,
      );
  }
  if (pending.length)
    out.push(
      "",
      "-- then the retention TTLs and the sessions merge setting are brought to the configuration",
    );
  process.stdout.write(`${out.join("\n")}\n`);
}
