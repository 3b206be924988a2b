// `sessionhouse migrate`: creates or upgrades the ClickHouse tables on their own; every sync and
// `run` does the same before it starts. --dry-run prints the statements it would run instead.
import { UsageError } from "../../util/errors.js";
import {
  appliedVersion,
  migrate,
  openWarehouse,
  pendingMigrations,
  retentionSettings,
  type Warehouse,
} from "../../warehouse/index.js";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
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
  if (
    o.dryRun &&
    !config.clickhouse.url &&
    !existsSync(config.clickhouse.dataDir)
  ) {
    // A dry run writes nothing, the data directory included.
    process.stdout.write(
      `-- ${config.clickhouse.database} at ${resolve(config.clickhouse.dataDir)}: the data directory does not exist yet, so every migration is pending (dry run: nothing was written)\n`,
    );
    return;
  }
  const w = await openWarehouse(config, { logger });
  try {
    await refuseGoingBack(w, o.to);
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

/** Migrations only go forward: --to a version before the database's is refused, nothing done. */
async function refuseGoingBack(
  w: Warehouse,
  to: number | undefined,
): Promise<void> {
  if (to === undefined) return;
  const at = await appliedVersion(w);
  if (at <= to) return;
  const v = (n: number) => String(n).padStart(4, "0");
  throw new UsageError(
    `${w.database} at ${w.location} is at migration ${v(at)}, past --to ${v(to)}: migrations only go forward, and nothing was changed`,
    {
      hint: `leave out --to (or give ${v(at)} or later); to get an older schema back, restore a backup or an archive into a new database`,
    },
  );
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
      `-- ${file.name}: ${counted(statements.length, "statement")}` +
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
