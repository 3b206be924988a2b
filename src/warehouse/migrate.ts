// Applies the numbered SQL files of migrations/ in order, once each, recording a checksum; an
// applied file that changed afterwards is refused (the tables would no longer match the files).
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema } from "../config/schema.js";
import type { Logger } from "../util/logger.js";
import type { Warehouse } from "./client.js";
import { quoteIdent } from "./sql.js";
import {
  clusterInsertSettings,
  consistentReadSettings,
  renderForMode,
  SINGLE,
  type ClusterMode,
} from "./cluster.js";
import { SinkError } from "./errors.js";
import { chTime } from "./format.js";
import { applyMergePolicy } from "./merges.js";
import {
  applyRetention,
  retentionSettings,
  type RetentionSettings,
} from "./retention.js";
import { selectRows } from "./select.js";
import { Tables } from "./tables.js";

/** migrations/ at the package root, from src/warehouse or dist/warehouse alike. */
export const MIGRATIONS_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "migrations",
);

/** The tables of the database, by name (a database not created yet has none). */
export async function existingTables(w: Warehouse): Promise<Set<string>> {
  const rows = await selectRows<{ name: string }>(
    w,
    "SELECT name FROM system.tables WHERE database = {db:String}",
    { db: w.database },
  );
  return new Set(rows.map((r) => r.name));
}

const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface MigrationFile {
  version: number;
  name: string;
  text: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => FILE.test(f))
    .sort()
    .map((file) => {
      const m = FILE.exec(file) as RegExpExecArray;
      const text = readFileSync(join(dir, file), "utf8");
      return {
        version: Number(m[1]),
        name: file,
        text,
        checksum: createHash("sha256").update(text).digest("hex"),
      };
    });
}

/**
 * The statements of a migration file for a cluster mode (cluster.ts), placeholders filled;
 * values are escaped identifiers.
 */
export function renderSql(
  text: string,
  vars: { db: string; mode?: ClusterMode },
): string[] {
  return text
    .split("\n")
    .filter((line) => !line.trim().startsWith("--"))
    .join("\n")
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .flatMap((stmt) => renderForMode(stmt, vars.mode ?? SINGLE, vars.db))
    .map((stmt) => stmt.replaceAll("{{db}}", quoteIdent(vars.db)));
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

export async function migrate(
  w: Warehouse,
  options: {
    /** The sessions' retention, with every other retention setting at its default. */
    retentionDays?: number;
    /** Every retention setting (wins over retentionDays). */
    retention?: RetentionSettings;
    logger?: Logger | undefined;
    dir?: string;
  } = {},
): Promise<MigrateResult> {
  const files = readMigrations(options.dir);
  const [bootstrap] = files;
  if (!bootstrap)
    throw new SinkError(
      "MIGRATIONS_MISSING",
      `no migration files in ${options.dir ?? MIGRATIONS_DIR}`,
    );
  // The first file creates the ledger itself; it runs until the ledger exists (on a cluster its
  // DDL waits for every node, and a later sync must not need a node that is down).
  if (!(await existingTables(w)).has(Tables.schemaMigrations))
    await runStatements(w, bootstrap.text);
  const done = await readApplied(w);
  const applied: string[] = [];
  for (const file of files) {
    const previous = done.get(file.version);
    if (previous) {
      checkUnchanged(w, file, previous);
      continue;
    }
    await runStatements(w, file.text);
    await recordApplied(w, file);
    applied.push(file.name);
    options.logger?.info({ migration: file.name }, "migration applied");
  }
  await applyRetention(
    w,
    options.retention ??
      retentionSettings({
        clickhouse: { retentionDays: options.retentionDays ?? 0 },
        retention: configSchema.shape.retention.parse({}),
      }),
    options.logger,
  );
  await applyMergePolicy(w, options.logger);
  return { applied, alreadyApplied: files.length - applied.length };
}

/** Runs the statements of one migration file in order; the first that fails stops it. */
async function runStatements(w: Warehouse, text: string): Promise<void> {
  for (const stmt of renderSql(text, {
    db: w.database,
    mode: w.cluster ?? SINGLE,
  })) {
    try {
      await w.client.command({ query: stmt });
    } catch (err) {
      throw new SinkError(
        "MIGRATION_FAILED",
        `a migration statement failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
}

/** The ledger of applied migrations, by version. */
async function readApplied(
  w: Warehouse,
): Promise<Map<number, AppliedMigration>> {
  const rs = await w.client.query({
    query: `SELECT version, name, checksum FROM ${quoteIdent(w.database)}.schema_migrations`,
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w.cluster ?? SINGLE),
  });
  return new Map(
    (await rs.json<AppliedMigration>()).map((r) => [r.version, r]),
  );
}

/** Refuses a migration file that changed after it was applied. */
function checkUnchanged(
  w: Warehouse,
  file: MigrationFile,
  previous: AppliedMigration,
): void {
  if (previous.checksum === file.checksum) return;
  throw new SinkError(
    "MIGRATION_CHANGED",
    `migration ${file.name} was changed after it was applied to ${w.database} (recorded as ${previous.name})`,
    {
      hint: "restore the file as it was (git checkout migrations/) and put the change in a new numbered migration",
    },
  );
}

async function recordApplied(w: Warehouse, file: MigrationFile): Promise<void> {
  await w.client.insert({
    table: `${quoteIdent(w.database)}.schema_migrations`,
    values: [
      {
        version: file.version,
        name: file.name,
        checksum: file.checksum,
        applied_at: chTime(Date.now()),
      },
    ],
    format: "JSONEachRow",
    clickhouse_settings: clusterInsertSettings(
      w.cluster ?? SINGLE,
      Tables.schemaMigrations,
    ),
  });
}
