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
import { rerunGuard } from "./rerun-guards.js";
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

/** A migration file not applied yet, with its statements for this database and mode. */
export interface PendingMigration {
  file: MigrationFile;
  statements: {
    index: number;
    sql: string;
    done: boolean;
    /** What a stopped run observed before it ran this statement (rerun-guards.ts). */
    before: string | undefined;
  }[];
}

/**
 * The files of `dir` (up to version `to`) not applied to the database, and which of their
 * statements an interrupted run already applied (ledger rows of version 0 named
 * `<file>#<statement>`, see recordStatement). Reads only: the database may not exist yet.
 */
export async function pendingMigrations(
  w: Warehouse,
  options: { dir?: string | undefined; to?: number | undefined } = {},
): Promise<PendingMigration[]> {
  const files = migrationFiles(options);
  const ledger = (await existingTables(w)).has(Tables.schemaMigrations)
    ? await readLedger(w)
    : { applied: new Map<number, AppliedMigration>(), statements: [] };
  const pending: PendingMigration[] = [];
  for (const file of files) {
    const previous = ledger.applied.get(file.version);
    if (previous) {
      checkUnchanged(w, file, previous);
      continue;
    }
    const done = new Set<number>();
    const before = new Map<number, string>();
    for (const s of ledger.statements.filter((r) => r.file === file.name)) {
      checkUnchanged(w, file, s);
      if (s.before === undefined) done.add(s.index);
      else before.set(s.index, s.before);
    }
    pending.push({
      file,
      statements: renderSql(file.text, {
        db: w.database,
        mode: w.cluster ?? SINGLE,
      }).map((sql, index) => ({
        index,
        sql,
        done: done.has(index),
        before: before.get(index),
      })),
    });
  }
  return pending;
}

/** The highest version applied to the database; 0 when none is (or it has no ledger yet). */
export async function appliedVersion(w: Warehouse): Promise<number> {
  if (!(await existingTables(w)).has(Tables.schemaMigrations)) return 0;
  const { applied } = await readLedger(w);
  return Math.max(0, ...applied.keys());
}

function migrationFiles(options: {
  dir?: string | undefined;
  to?: number | undefined;
}): MigrationFile[] {
  const all = readMigrations(options.dir);
  if (all.length === 0)
    throw new SinkError(
      "MIGRATIONS_MISSING",
      `no migration files in ${options.dir ?? MIGRATIONS_DIR}`,
    );
  const to = options.to;
  if (to === undefined) return all;
  if (!all.some((f) => f.version === to))
    throw new SinkError(
      "MIGRATION_UNKNOWN",
      `there is no migration numbered ${to} in ${options.dir ?? MIGRATIONS_DIR}`,
      {
        hint: `give --to one of ${all.map((f) => String(f.version).padStart(4, "0")).join(", ")}`,
      },
    );
  return all.filter((f) => f.version <= to);
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
    /**
     * Apply the files up to this version only; the retention TTLs and the merge setting, which
     * need the tables of every file, are then left as they are.
     */
    to?: number | undefined;
  } = {},
): Promise<MigrateResult> {
  const files = migrationFiles(options);
  const [bootstrap] = files as [MigrationFile];
  // The first file creates the ledger itself; it runs until the ledger exists (on a cluster its
  // DDL waits for every node, and a later sync must not need a node that is down). Its
  // statements are safe to run again.
  if (!(await existingTables(w)).has(Tables.schemaMigrations))
    for (const sql of renderSql(bootstrap.text, {
      db: w.database,
      mode: w.cluster ?? SINGLE,
    }))
      await runStatement(w, bootstrap, sql);
  const pending = await pendingMigrations(w, options);
  for (const { file, statements } of pending) {
    for (const s of statements) if (!s.done) await applyStatement(w, file, s);
    await recordApplied(w, file);
    options.logger?.info({ migration: file.name }, "migration applied");
  }
  if (options.to === undefined) await applyPolicies(w, options);
  return {
    applied: pending.map((p) => p.file.name),
    alreadyApplied: files.length - pending.length,
  };
}

/** The retention TTLs and the sessions merge setting, brought to the configuration. */
async function applyPolicies(
  w: Warehouse,
  options: {
    retentionDays?: number;
    retention?: RetentionSettings;
    logger?: Logger | undefined;
  },
): Promise<void> {
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
}

/**
 * Runs statement `index` of a file and records it, so that a run stopped after it (killed, a
 * server error on the next one) resumes with the statement after it.
 */
export async function applyStatement(
  w: Warehouse,
  file: MigrationFile,
  statement: { index: number; sql: string; before?: string | undefined },
): Promise<void> {
  const guard = rerunGuard(statement.sql);
  // A run stopped after (or while) this statement ran and before it was recorded: the guard
  // completes it instead of running it again.
  const resumed =
    guard !== undefined &&
    statement.before !== undefined &&
    (await guard.resume(w, statement.before));
  if (!resumed) {
    if (guard) {
      const now = await guard.observe(w);
      await insertLedgerRow(
        w,
        0,
        `${file.name}#${statement.index} before ${now}`,
        file.checksum,
      );
    }
    await runStatement(w, file, statement.sql);
  }
  await recordStatement(w, file, statement.index);
}

/** Runs one statement of a migration file; a failure names the file. */
async function runStatement(
  w: Warehouse,
  file: MigrationFile,
  sql: string,
): Promise<void> {
  try {
    await w.client.command({ query: sql });
  } catch (err) {
    throw new SinkError(
      "MIGRATION_FAILED",
      `a statement of migration ${file.name} failed: ${(err as Error).message}`,
      {
        cause: err,
        hint: "fix the cause and run `sessionhouse migrate` again: the statements already applied are recorded and are not run twice",
      },
    );
  }
}

interface AppliedMigration {
  version: number;
  name: string;
  checksum: string;
}

/**
 * A statement of a file not yet applied whole: recorded once it ran, and for a statement that
 * must not run twice (rerun-guards.ts) also before it ran, with what it changes as it was then.
 */
interface AppliedStatement {
  file: string;
  index: number;
  name: string;
  checksum: string;
  before?: string;
}

const STATEMENT_ROW = /^(.+)#(\d+)(?: before (.+))?$/;

/** The ledger: applied migrations by version, and the statements of unfinished ones. */
async function readLedger(w: Warehouse): Promise<{
  applied: Map<number, AppliedMigration>;
  statements: AppliedStatement[];
}> {
  const rs = await w.client.query({
    query: `SELECT version, name, checksum FROM ${quoteIdent(w.database)}.schema_migrations`,
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w),
  });
  const rows = await rs.json<AppliedMigration>();
  const statements: AppliedStatement[] = [];
  for (const r of rows) {
    const m = r.version === 0 ? STATEMENT_ROW.exec(r.name) : null;
    if (m)
      statements.push({
        ...r,
        file: m[1] ?? "",
        index: Number(m[2]),
        ...(m[3] === undefined ? {} : { before: m[3] }),
      });
  }
  return {
    applied: new Map(
      rows.filter((r) => r.version !== 0).map((r) => [r.version, r]),
    ),
    statements,
  };
}

/** Refuses a migration file that changed after it was applied. */
function checkUnchanged(
  w: Warehouse,
  file: MigrationFile,
  previous: { name: string; checksum: string },
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
  await insertLedgerRow(w, file.version, file.name, file.checksum);
}

/**
 * Records that statement `index` of a file ran: a ledger row of version 0 (no file has it, so a
 * version that reads the ledger by version passes over it), named `<file>#<index>`.
 */
async function recordStatement(
  w: Warehouse,
  file: MigrationFile,
  index: number,
): Promise<void> {
  await insertLedgerRow(w, 0, `${file.name}#${index}`, file.checksum);
}

async function insertLedgerRow(
  w: Warehouse,
  version: number,
  name: string,
  checksum: string,
): Promise<void> {
  await w.client.insert({
    table: `${quoteIdent(w.database)}.schema_migrations`,
    values: [{ version, name, checksum, applied_at: chTime(Date.now()) }],
    format: "JSONEachRow",
    clickhouse_settings: clusterInsertSettings(
      w.cluster ?? SINGLE,
      Tables.schemaMigrations,
    ),
  });
}
