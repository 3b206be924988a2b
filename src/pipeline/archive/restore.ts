// Restoring a month into a database: only a month that passes the checks verify makes of it,
// into tables whose columns are the archive's and that delete nothing, with the rows that
// landed counted against the archive's.
import type { KeyObject } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { MANIFEST_FILE } from "../../evidence/manifest.js";
import { FatalError, UsageError } from "../../util/errors.js";
import {
  appliedRetention,
  applyHolds,
  archiveFileName,
  archiveSpec,
  type ColumnType,
  isActive,
  listHolds,
  type MonthRange,
  monthRows,
  restoreFile,
  refusePatternPath,
  retireSupersededKeys,
  storedColumns,
  Tables,
  type Warehouse,
  withMergesPaused,
} from "../../warehouse/index.js";
import { checkWithEngine, type MonthCheck, PROBLEM_HINTS } from "./check.js";
import { markMonth } from "./mark.js";
import {
  type ArchivedTable,
  type ArchiveManifestFields,
  monthRange,
} from "./months.js";

export interface RestoreResult {
  /**
   * Per table loaded: the month's rows in the target after the load (FINAL, as the archive
   * counts them), and the rows the archive holds.
   */
  tables: Array<{ table: string; rows: number; archived: number }>;
  /** What the restore did not check or accepted on request, for stderr. */
  notes: string[];
}

/**
 * Loads a month's archive into `w` (migrated) when it passes the checks `archive verify` makes
 * of it (checkMonth): a signed month needs the key it must be signed by (`trusted`), an
 * unsigned one `allowUnsigned`, and every archived table's columns must be exactly the target
 * table's. The target's tables must delete nothing (a retention TTL would remove the restored
 * rows at their next merge). Nothing is written unless everything passes, and only the
 * archive's data tables are written; then the month's rows in the target are counted and must
 * be the archive's (checkLanded). Restored sessions are flagged by the active holds of `w`, and
 * one stored since under another start time keeps only its latest key (session-keys.ts).
 * Restoring the same month again changes nothing (see restoreFile).
 */
export async function restoreArchive(
  w: Warehouse,
  options: RestoreOptions,
): Promise<RestoreResult> {
  const range = monthRange(options.month);
  refusePatternPath(resolve(options.root));
  const dir = join(resolve(options.root), options.month);
  if (!existsSync(join(dir, MANIFEST_FILE)))
    throw new UsageError(`${dir} holds no archive (no ${MANIFEST_FILE})`, {
      hint: "give the directory archive export wrote to (--from) and an archived month",
    });
  const check = await checkWithEngine(w, options.root, options.month, {
    trusted: options.trusted,
    allowUnsigned: options.allowUnsigned === true,
  });
  const { manifest, notes } = trustedMonth(check, options, dir);
  const files = manifest.tables.filter((t) => t.file !== "");
  await checkColumns(w, files, options.month);
  await checkKeepsAll(w, files);
  const before = await countMonth(w, files, range);
  await withMergesPaused(w, async () => {
    for (const t of files)
      await restoreFile(
        w,
        t.table,
        t.columns,
        join(dir, archiveFileName(t.table)),
        `archive:${String(check.manifestSha256)}:${t.table}`,
      );
  });
  const after = await countMonth(w, files, range);
  const tables = files.map((t) => ({
    table: t.table,
    rows: after.get(t.table) ?? 0,
    archived: t.rows,
  }));
  checkLanded(w, options.month, tables, before);
  // The rows loaded are archived: marked so, as the export marked them where they came from.
  await markMonth(
    w,
    options.month,
    Date.parse(manifest.fetchedBefore ?? manifest.exportedAt),
  );
  // A restored session row has the flag of the day it was archived, and as a read of the same
  // version it may replace the stored row in a merge: the holds of this database flag it again
  // now, as their next application would (and, like it, nothing when there is no hold).
  if (files.some((t) => t.table === Tables.sessions)) {
    const holds = await listHolds(w);
    if (holds.length > 0)
      await applyHolds(
        w,
        holds.filter((h) => isActive(h, Date.now())),
      );
    // A restored row keeps the fetch time of its read, before what the rollups have judged
    // (ROLLUPS_KEYS_STREAM): a session stored since under another start time is brought to one
    // here, every key judged, as the writers judge their reads.
    await retireSupersededKeys(w);
  }
  return { tables, notes };
}

/** The month's rows of each table in `w`, as the archive counts them (monthRows). */
async function countMonth(
  w: Warehouse,
  files: readonly ArchivedTable[],
  range: MonthRange,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const t of files) {
    const spec = archiveSpec(t.table);
    if (spec !== undefined)
      counts.set(t.table, await monthRows(w, spec, range));
  }
  return counts;
}

/**
 * Refuses a target whose tables would delete restored rows: a retention recorded for one of
 * them (retention_settings; `archive restore` migrates its target without one).
 */
async function checkKeepsAll(
  w: Warehouse,
  files: readonly ArchivedTable[],
): Promise<void> {
  const loaded = new Set(files.map((t) => t.table));
  const deleting = (await appliedRetention(w)).filter(
    (r) => loaded.has(r.table) && r.retentionDays > 0,
  );
  if (deleting.length === 0) return;
  throw new FatalError(
    "RESTORE_TARGET_DELETES",
    `the tables of ${w.database} delete rows by age (${deleting.map((r) => `${r.table} after ${r.retentionDays} days`).join(", ")}): restored rows older than that would go at their next merge`,
    {
      hint: "restore into a database migrated without retention (sessionhouse archive restore migrates its target so; --database)",
    },
  );
}

/**
 * The rows that landed must be the archive's: as many as it holds when the target held none of
 * the month before, at least as many otherwise (rows already there collapse with the archive's
 * under FINAL). Fewer means rows were dropped (an insert taken for a repeat of an earlier
 * restore, a table that deletes): exit 1, naming each table.
 */
function checkLanded(
  w: Warehouse,
  month: string,
  tables: RestoreResult["tables"],
  before: ReadonlyMap<string, number>,
): void {
  const short = tables.filter((t) =>
    (before.get(t.table) ?? 0) === 0
      ? t.rows !== t.archived
      : t.rows < t.archived,
  );
  if (short.length === 0) return;
  throw new FatalError(
    "RESTORE_ROWS_MISMATCH",
    `${month} was loaded into ${w.database}, but its rows there are not the archive's: ${short.map((t) => `${t.table} ${t.rows} rows of ${month} (${before.get(t.table) ?? 0} before the load), the archive holds ${t.archived}`).join("; ")}`,
    {
      hint: "restore into a fresh database (--database <new name>): an insert repeating an earlier restore of the same month is dropped by the engine's deduplication",
    },
  );
}

interface RestoreOptions {
  month: string;
  root: string;
  trusted?: KeyObject | undefined;
  allowUnsigned?: boolean;
}

/**
 * The manifest of a month that may be restored, and what to warn of; refused when unsigned
 * without --allow-unsigned, with any problem, or signed with no public key to check it by.
 */
function trustedMonth(
  check: MonthCheck,
  options: RestoreOptions,
  dir: string,
): { manifest: ArchiveManifestFields; notes: string[] } {
  if (check.signature.state === "unsigned" && options.allowUnsigned !== true)
    throw new FatalError(
      "ARCHIVE_UNSIGNED",
      `the archive of ${options.month} is not signed: nothing shows who wrote it${check.problems.length > 0 ? `, and:\n  ${check.problems.map((p) => p.message).join("\n  ")}` : ""}`,
      {
        hint: "restore it with --allow-unsigned only if you trust the directory it came from; sign archives with SESSIONHOUSE_SIGNING_KEY_FILE",
      },
    );
  const first = check.problems[0];
  if (first !== undefined || check.manifest === undefined)
    throw new FatalError(
      first?.code ?? "ARCHIVE_MANIFEST_INVALID",
      `the archive of ${options.month} in ${dir} is not restored:\n  ${check.problems.map((p) => p.message).join("\n  ")}`,
      { hint: PROBLEM_HINTS[first?.code ?? "ARCHIVE_MANIFEST_INVALID"] },
    );
  if (check.signature.state === "unchecked")
    throw new FatalError(
      "PUBLIC_KEY_REQUIRED",
      `the archive of ${options.month} is signed (key ${check.signature.fingerprint}), and no public key is given to check it by: anyone can sign a manifest with a key of their own`,
      {
        hint: "give the public key the archive must be signed by: --public-key signing.pub (or SESSIONHOUSE_PUBLIC_KEY_FILE)",
      },
    );
  const notes: string[] = [];
  if (check.signature.state === "unsigned")
    notes.push(
      `${options.month} is not signed: restored because --allow-unsigned was given; nothing shows who wrote it`,
    );
  if (check.previousAbsent !== undefined)
    notes.push(
      `the chain link of ${options.month} to ${check.previousAbsent} is not checked: ${check.previousAbsent} is not in ${resolve(options.root)}`,
    );
  return { manifest: check.manifest, notes };
}

/** Refuses files whose columns are not those of the tables they would load into. */
async function checkColumns(
  w: Warehouse,
  files: readonly ArchivedTable[],
  month: string,
): Promise<void> {
  const mismatched: string[] = [];
  for (const t of files) {
    const differs = columnDifference(
      t.columns,
      await storedColumns(w, t.table),
      archiveSpec(t.table)?.laterColumns ?? [],
    );
    if (differs !== undefined)
      mismatched.push(`${t.table} in ${w.database}: ${differs}`);
  }
  if (mismatched.length > 0)
    throw new FatalError(
      "ARCHIVE_COLUMNS_MISMATCH",
      `the archive of ${month} does not have the columns of the tables it would load into:\n  ${mismatched.join("\n  ")}`,
      {
        hint: "restore into a database migrated by the sessionhouse version that wrote the archive (--database), or take the month from an intact copy",
      },
    );
}

/** How the archived columns differ from the table's stored ones; undefined when they are the same. */
function columnDifference(
  archived: readonly ColumnType[],
  stored: readonly ColumnType[],
  laterColumns: readonly string[],
): string | undefined {
  if (stored.length === 0) return "no such table";
  const types = new Map(stored.map((c) => [c.name, c.type]));
  const names = new Set(archived.map((c) => c.name));
  const out: string[] = [];
  const counted = new Set<string>();
  for (const c of archived) {
    if (counted.has(c.name)) out.push(`column ${c.name} archived twice`);
    counted.add(c.name);
    const type = types.get(c.name);
    if (type === undefined)
      out.push(`column ${JSON.stringify(c.name)} is not in the table`);
    else if (type !== c.type)
      out.push(
        `column ${c.name} is ${c.type} in the archive, ${type} in the table`,
      );
  }
  for (const c of stored)
    if (!names.has(c.name) && !laterColumns.includes(c.name))
      out.push(`column ${c.name} is not in the archive`);
  return out.length === 0 ? undefined : out.join("; ");
}
