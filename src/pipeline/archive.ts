// Monthly archives that outlive the database: a directory per month (`<root>/YYYY-MM/`) with one
// Parquet file per table and a manifest (src/evidence/manifest.ts: every file's SHA-256, the
// optional Ed25519 signature) that records each table's rows, time range and schema and the
// SHA-256 of the previous archived month's manifest. The months form a chain: removing or
// editing one breaks the next one's link, and the last one's hash (the head) is what an
// operator keeps in write-once storage. `checkMonth` is the one check of a month that verify
// reports and restore requires; the format itself is src/warehouse/archive.ts.
import type { KeyObject } from "node:crypto";
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";
import type { Config } from "../config/index.js";
import {
  MANIFEST_FILE,
  readManifest,
  verifyEvidence,
  writeManifest,
  type EvidenceCheck,
  type SignatureState,
} from "../evidence/manifest.js";
import { FatalError, UsageError, errorMessage } from "../util/errors.js";
import { makePrivateDir, type Sharing } from "../util/private-files.js";
import { SESSIONS_STREAM } from "./names.js";
import { allCheckpoints, coveredSpans } from "./status.js";
import {
  appliedRetention,
  applyHolds,
  ARCHIVE_FORMAT,
  ARCHIVE_TABLES,
  archiveFileName,
  archivedColumns,
  archiveSpec,
  type ArchiveSpec,
  archiveSpecs,
  type ColumnType,
  exportMonth,
  isActive,
  listHolds,
  markArchived,
  type MonthRange,
  monthRows,
  openScratchEngine,
  parquetFileStats,
  parquetStats,
  parquetStatsSql,
  restoreFile,
  refusePatternPath,
  retireSupersededKeys,
  type RowStats,
  type ScratchEngine,
  selectRows,
  storedColumns,
  Tables,
  thinnedSessionDays,
  unmarkedRows,
  type Warehouse,
  withMergesPaused,
} from "../warehouse/index.js";

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface ArchivedTable {
  table: string;
  file: string;
  timeColumn: string;
  rows: number;
  minTime: string | null;
  maxTime: string | null;
  columns: ColumnType[];
}

/** Months an operator chose to leave out of the chain before this one, with who and why. */
export interface SkippedMonths {
  months: string[];
  by: string;
  reason: string;
}

export interface ArchiveManifestFields {
  format: typeof ARCHIVE_FORMAT;
  month: string;
  database: string;
  exportedAt: string;
  /**
   * The instant the export began reading (absent in months archived before it was kept): rows
   * fetched before it are in the files, and are the rows marked archived.
   */
  fetchedBefore?: string | undefined;
  previous: { month: string; manifestSha256: string } | null;
  /** The months between `previous` and this one, skipped on purpose (absent: none). */
  skipped?: SkippedMonths | undefined;
  tables: ArchivedTable[];
}

/** The shape a manifest must have before any of its members is used (it is read from disk). */
const manifestFieldsSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  month: z.string(),
  database: z.string(),
  exportedAt: z.string(),
  fetchedBefore: z.string().optional(),
  previous: z
    .object({ month: z.string(), manifestSha256: z.string() })
    .nullable(),
  skipped: z
    .object({
      months: z.array(z.string()),
      by: z.string(),
      reason: z.string(),
    })
    .optional(),
  tables: z.array(
    z.object({
      table: z.string(),
      file: z.string(),
      timeColumn: z.string(),
      rows: z.number().int().nonnegative(),
      minTime: z.string().nullable(),
      maxTime: z.string().nullable(),
      columns: z.array(
        z.object({ name: z.string().min(1), type: z.string().min(1) }),
      ),
    }),
  ),
});

/** "2026-10" → its range; a usage error for anything else. */
function monthRange(month: string): MonthRange {
  if (!MONTH.test(month))
    throw new UsageError(`--month must be YYYY-MM, got "${month}"`, {
      hint: "e.g. --month 2026-10",
    });
  const [y, m] = month.split("-").map(Number) as [number, number];
  const next =
    m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, "0")}`;
  return { from: `${month}-01 00:00:00`, to: `${next}-01 00:00:00` };
}

/** The archived months under `root`, oldest first (directories holding a manifest). */
function archivedMonths(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => MONTH.test(d) && existsSync(join(root, d, MANIFEST_FILE)))
    .sort();
}

const iso = (ms: number | null) =>
  ms === null ? null : new Date(ms).toISOString();

/**
 * How long after its end a month still changes: sessions that started in it are still stored
 * by the sync's re-read of the last `sessions.lookbackMs`, and log counts of its last windows
 * are fetched again for `refetchMs` (the longest of the enabled aggregation jobs).
 */
export function archiveSettleMs(config: Config): number {
  return Math.max(
    config.sessions.lookbackMs,
    ...config.aggregations.jobs
      .filter((j) => j.enabled)
      .map((j) => j.refetchMs),
  );
}

export interface ExportResult {
  dir: string;
  tables: ArchivedTable[];
  /** SHA-256 of the new manifest: the chain's head. */
  head: string;
  rows: number;
  ms: number;
  /** Rows marked archived; undefined when this access cannot write (see markArchives). */
  marked: number | undefined;
  skipped: SkippedMonths | undefined;
}

/**
 * Writes the month's archive under `root/month`, chained to the latest month archived before
 * it, checks it as verify does, and marks the month's rows archived (what lets the retention
 * delete them when an archive directory is configured). Refused before anything is written: a
 * month already archived, or one before the latest archived month (archives are never
 * rewritten, and the chain only grows at its end); a month after a gap in the chain unless the
 * operator skips the months between (`skipGap`, recorded in the manifest); a month that has not
 * ended `settleMs` ago (see archiveSettleMs); a month the sessions stream's checkpoints do not
 * cover whole (not synced); and a month some of whose sessions are gone (the retention).
 */
export async function exportArchive(
  w: Warehouse,
  options: ExportOptions,
): Promise<ExportResult> {
  const started = Date.now();
  const nowMs = options.nowMs ?? Date.now();
  const range = monthRange(options.month);
  refusePatternPath(resolve(options.root));
  checkSettled(options.month, range, nowMs, options.settleMs ?? 0);
  const { root, dir, last } = newMonthDir(options.root, options.month);
  const skipped = checkGap(options.month, last, options.skipGap);
  await checkSynced(w, options.month, range);
  await checkWhole(w, options.month, range);
  // Rows fetched from here on may be missing from the files: they are not marked archived.
  const fetchedBefore = new Date().toISOString();
  makePrivateDir(dir, options);
  let engine: ScratchEngine | undefined;
  const scratch = async () => (engine ??= await openScratchEngine());
  try {
    const tables = await exportTables(w, range, dir, scratch, options);
    const fields: ArchiveManifestFields = {
      format: ARCHIVE_FORMAT,
      month: options.month,
      database: w.database,
      exportedAt: new Date(nowMs).toISOString(),
      fetchedBefore,
      previous:
        last === undefined
          ? null
          : {
              month: last,
              manifestSha256: readManifest(join(root, last)).sha256,
            },
      ...(skipped === undefined ? {} : { skipped }),
      tables,
    };
    const { sha256 } = writeManifest(
      dir,
      { ...fields },
      {
        signingKeyFile: options.signingKeyFile,
        groupReadable: options.groupReadable,
      },
    );
    await checkWritten(w, root, options.month, scratch);
    return {
      dir,
      tables,
      head: sha256,
      rows: tables.reduce((n, t) => n + t.rows, 0),
      ms: Date.now() - started,
      marked: await markWritten(w, options.month, Date.parse(fetchedBefore)),
      skipped,
    };
  } catch (err) {
    // No half archive is left to be taken for a whole one.
    if (!(err instanceof MarkError))
      rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    engine?.close();
  }
}

export interface ExportOptions {
  month: string;
  root: string;
  signingKeyFile?: string | undefined;
  /** Share the files with the owner's group (files.groupReadable). */
  groupReadable?: boolean | undefined;
  /** After the month's end, how long its data still changes (default 0). */
  settleMs?: number;
  nowMs?: number;
  /** Leave the months between the chain's last month and this one out, recording who and why. */
  skipGap?: { by: string; reason: string } | undefined;
}

/** The months after `after` and before `before`, in order ("2026-08", "2026-11": 09 and 10). */
function monthsBetween(after: string, before: string): string[] {
  const out: string[] = [];
  let [y, m] = after.split("-").map(Number) as [number, number];
  for (;;) {
    m++;
    if (m === 13) [y, m] = [y + 1, 1];
    const month = `${y}-${String(m).padStart(2, "0")}`;
    if (month >= before) return out;
    out.push(month);
  }
}

/**
 * The chain has no silent gap: a month that does not follow the chain's last month is refused,
 * unless the operator skips the months between (`skipGap`), which the new month's manifest
 * records and verify names.
 */
function checkGap(
  month: string,
  last: string | undefined,
  skipGap: ExportOptions["skipGap"],
): SkippedMonths | undefined {
  const gap = last === undefined ? [] : monthsBetween(last, month);
  if (gap.length === 0) {
    if (skipGap !== undefined)
      throw new UsageError(
        `--skip-gap: ${month} follows ${last ?? "no archived month"} directly, there is no month to skip`,
        { hint: "leave out --skip-gap" },
      );
    return undefined;
  }
  if (skipGap === undefined)
    throw new UsageError(
      `the archive's last month is ${String(last)}: ${month} would leave ${gap.join(", ")} out of the chain`,
      {
        hint: `archive ${gap[0] ?? ""} first; or, if ${gap.length > 1 ? "those months are" : "that month is"} to stay out of the archive for good, export ${month} with --skip-gap --reason "…" (recorded in its manifest, and named by archive verify)`,
      },
    );
  return { months: gap, by: skipGap.by, reason: skipGap.reason };
}

/**
 * Refuses a month the sessions stream's checkpoints do not cover whole (coveredSpans): its
 * sessions were not all synced, and an archive is never rewritten.
 */
async function checkSynced(
  w: Warehouse,
  month: string,
  range: MonthRange,
): Promise<void> {
  const period = { fromMs: msOf(range.from), toMs: msOf(range.to) };
  const checkpoints = await allCheckpoints(w);
  const { missing } = coveredSpans(
    SESSIONS_STREAM,
    checkpoints,
    period,
    (r) => `${iso(r.fromMs)} to ${iso(r.toMs)}`,
  );
  if (missing.length === 0) return;
  const spans = missing.map((m) => `${iso(m.fromMs)} to ${iso(m.toMs)}`);
  const first = missing[0] as { fromMs: number; toMs: number };
  throw new FatalError(
    "MONTH_NOT_SYNCED",
    `${month} is not synced whole: no checkpoint of the sessions stream covers ${spans.join(", ")}, so its sessions may be missing, and an archived month is never rewritten`,
    {
      hint: `sync the missing range first (sessionhouse sync sessions --from ${String(iso(first.fromMs))} --to ${String(iso(first.toMs))}), then export ${month}`,
    },
  );
}

/**
 * Refuses a month some of whose sessions are gone: a day holding fewer sessions than the rollups
 * counted when they computed it (the retention deleted rows before the month was archived).
 */
async function checkWhole(
  w: Warehouse,
  month: string,
  range: MonthRange,
): Promise<void> {
  const thinned = await thinnedSessionDays(w, range);
  if (thinned.length === 0) return;
  const recorded = thinned.reduce((n, d) => n + d.recorded, 0);
  const stored = thinned.reduce((n, d) => n + d.stored, 0);
  const days = thinned.map((d) => `${d.day} ${d.stored} of ${d.recorded}`);
  throw new FatalError(
    "MONTH_THINNED",
    `${month} is not whole: on ${thinned.length} day(s) the rollups counted ${recorded} sessions stored, and ${stored} remain (${days.slice(0, 5).join(", ")}${days.length > 5 ? ", …" : ""}); the retention (SESSIONHOUSE_RETENTION_DAYS) deleted the others before the month was archived`,
    {
      hint: `set SESSIONHOUSE_ARCHIVE_DIR (the retention then waits for the archive), sync ${month} again from the control plane while it still holds it (sessionhouse sync sessions --from ${range.from.slice(0, 10)} --to ${range.to.slice(0, 10)}), then export ${month}; an archived month is never rewritten`,
    },
  );
}

const msOf = (plain: string): number =>
  Date.parse(`${plain.replace(" ", "T")}Z`);

/**
 * The month just written, checked as verify checks it, read back by the engine that read its
 * files (one scratch engine a process); a problem removes it (see exportArchive).
 */
async function checkWritten(
  w: Warehouse,
  root: string,
  month: string,
  scratch: () => Promise<ScratchEngine>,
): Promise<void> {
  const check = await checkMonth(root, month, {
    allowUnsigned: true,
    reader: w.kind === "embedded" ? warehouseReader(w) : await scratch(),
  });
  if (check.problems.length > 0)
    throw new FatalError(
      "ARCHIVE_INVALID",
      `the archive of ${month} just written does not verify:\n  ${check.problems.map((p) => p.message).join("\n  ")}`,
      { hint: "export it again; nothing was kept" },
    );
}

/** A month written and checked whose rows could not be marked archived (kept, marked later). */
class MarkError extends FatalError {}

/** Marks the month's rows archived; undefined through an access that cannot write. */
async function markWritten(
  w: Warehouse,
  month: string,
  fetchedBeforeMs: number,
): Promise<number | undefined> {
  if (w.service !== undefined) return undefined;
  try {
    return await markMonth(w, month, fetchedBeforeMs);
  } catch (err) {
    throw new MarkError(
      "ARCHIVE_NOT_MARKED",
      `${month} is archived, but its rows could not be marked archived: ${errorMessage(err)}`,
      {
        cause: err,
        hint: "the archive is whole; the rollups job marks the rows of every archived month of SESSIONHOUSE_ARCHIVE_DIR (sessionhouse sync rollups), until then the retention keeps them",
      },
    );
  }
}

/**
 * Marks the rows of every month archived in `root` that are not marked yet (those fetched before
 * the month's export began), each month checked as verify checks it first: the months exported
 * through the running service's read access, or whose marking failed. The rollups job runs it
 * when an archive directory is configured. A month that does not verify is left unmarked (its
 * rows stay) and named. Returns the rows marked per month and the months refused.
 */
export async function markArchives(
  w: Warehouse,
  root: string,
): Promise<{ marked: Record<string, number>; refused: string[] }> {
  refusePatternPath(resolve(root));
  const marked: Record<string, number> = {};
  const refused: string[] = [];
  for (const month of archivedMonths(resolve(root))) {
    const manifest = manifestOf(root, month);
    const before = Date.parse(
      manifest?.fetchedBefore ?? manifest?.exportedAt ?? "",
    );
    if (!Number.isFinite(before) || !(await unmarked(w, month, before)))
      continue;
    const check = await checkWithEngine(w, root, month, {
      allowUnsigned: true,
    });
    if (check.problems.length > 0) {
      refused.push(
        `${month}: ${check.problems.map((p) => p.message).join("; ")}`,
      );
      continue;
    }
    marked[month] = await markMonth(w, month, before);
  }
  return { marked, refused };
}

/** A month's manifest fields as written, or undefined when it is not an archive manifest. */
function manifestOf(
  root: string,
  month: string,
): ArchiveManifestFields | undefined {
  try {
    const parsed = manifestFieldsSchema.safeParse(
      readManifest(join(resolve(root), month)).manifest,
    );
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a flagged table holds rows of `month` fetched before `beforeMs` not marked archived. */
async function unmarked(
  w: Warehouse,
  month: string,
  beforeMs: number,
): Promise<boolean> {
  const range = monthRange(month);
  for (const spec of await archiveSpecs(w))
    if (
      spec.flagged === true &&
      (await unmarkedRows(w, spec, range, beforeMs)) > 0
    )
      return true;
  return false;
}

/**
 * A month of the archive checked as verify checks it (checkMonth), its files read back by the
 * warehouse's engine (embedded) or a scratch one (a server cannot read this machine's files).
 */
async function checkWithEngine(
  w: Warehouse,
  root: string,
  month: string,
  options: Omit<CheckOptions, "reader">,
): Promise<MonthCheck> {
  let scratch: ScratchEngine | undefined;
  try {
    const reader =
      w.kind === "embedded"
        ? warehouseReader(w)
        : (scratch = await openScratchEngine());
    return await checkMonth(root, month, { ...options, reader });
  } finally {
    scratch?.close();
  }
}

/** Marks archived every flagged table's rows of `month` fetched before `fetchedBeforeMs`. */
async function markMonth(
  w: Warehouse,
  month: string,
  fetchedBeforeMs: number,
): Promise<number> {
  const range = monthRange(month);
  let marked = 0;
  for (const spec of await archiveSpecs(w))
    marked += await markArchived(w, spec, range, fetchedBeforeMs);
  return marked;
}

/** Refuses a month that has not ended `settleMs` ago. */
function checkSettled(
  month: string,
  range: { to: string },
  nowMs: number,
  settleMs: number,
): void {
  const endMs = Date.parse(`${range.to.replace(" ", "T")}Z`);
  if (nowMs >= endMs + settleMs) return;
  const first = new Date(endMs + settleMs).toISOString();
  throw new FatalError(
    "MONTH_NOT_ENDED",
    `${month} has not ended for the archive: it ends at ${new Date(endMs).toISOString()}, and sessions and log counts of its last hours are still stored until ${first} (the sessions lookback, SESSIONHOUSE_LOOKBACK, and the aggregations' refetch)`,
    {
      hint: `export ${month} at or after ${first}: an archived month is never rewritten, so one exported earlier would miss what arrives later`,
    },
  );
}

/**
 * The directory of a month new to the archive at the chain's end, and the month it follows;
 * refuses a month archived already, one before the latest, and a directory left half written.
 */
function newMonthDir(
  rootOption: string,
  month: string,
): { root: string; dir: string; last: string | undefined } {
  const root = resolve(rootOption);
  const months = archivedMonths(root);
  if (months.includes(month))
    throw new UsageError(`${month} is archived already in ${root}`, {
      hint: "an archive is never rewritten; verify it with `sessionhouse archive verify`",
    });
  const last = months.at(-1);
  if (last !== undefined && last > month)
    throw new UsageError(
      `${root} holds ${last}, later than ${month}: the chain only grows at its end`,
      { hint: "archive months in order, or into another directory" },
    );
  const dir = join(root, month);
  if (existsSync(dir))
    throw new UsageError(`${dir} exists but holds no ${MANIFEST_FILE}`, {
      hint: "an earlier export stopped half way: remove the directory and export again",
    });
  return { root, dir, last };
}

/** Every archived table's file of the month in `dir`; sessions listed even without rows. */
async function exportTables(
  w: Warehouse,
  range: MonthRange,
  dir: string,
  scratch: () => Promise<ScratchEngine>,
  options: ExportOptions,
): Promise<ArchivedTable[]> {
  const tables: ArchivedTable[] = [];
  for (const spec of await archiveSpecs(w)) {
    const columns = await archivedColumns(w, spec);
    const file = archiveFileName(spec.table);
    const stats = await exportTable(
      w,
      spec,
      columns,
      range,
      join(dir, file),
      scratch,
      options,
    );
    if (stats.rows === 0 && spec.table !== Tables.sessions) continue;
    tables.push({
      table: spec.table,
      file: stats.rows > 0 ? file : "",
      timeColumn: spec.timeColumn,
      rows: stats.rows,
      minTime: iso(stats.minTimeMs),
      maxTime: iso(stats.maxTimeMs),
      columns,
    });
  }
  return tables;
}

/**
 * Writes one table's file and returns what it holds, counted from the file itself (its time
 * column only): rows stored in the month while it was written (a sync of the running service)
 * can then never make the manifest disagree with the file. The embedded engine reads its own
 * file back; a server's answer (or the running service's) lands on this machine, where a scratch
 * engine reads it. A table without rows in the month gets no file.
 */
async function exportTable(
  w: Warehouse,
  spec: ArchiveSpec,
  columns: readonly ColumnType[],
  range: MonthRange,
  path: string,
  scratch: () => Promise<ScratchEngine>,
  sharing: Sharing,
): Promise<RowStats> {
  await exportMonth(w, spec, columns, range, path, sharing);
  if (!existsSync(path)) return { rows: 0, minTimeMs: null, maxTimeMs: null };
  const stats =
    w.kind === "embedded"
      ? await parquetFileStats(w, path, spec.timeColumn)
      : parquetStats(
          (
            await (
              await scratch()
            ).rows<{ rows: string; min_ms: string; max_ms: string }>(
              parquetStatsSql(path, spec.timeColumn),
            )
          )[0],
        );
  if (stats.rows === 0) rmSync(path, { force: true });
  return stats;
}

/**
 * Why a month's archive cannot be trusted, by kind. `archive verify` lists them; `archive
 * restore` refuses with the first one's code (and lists them all).
 */
type ArchiveProblemCode =
  | "ARCHIVE_MANIFEST_INVALID"
  | "ARCHIVE_TABLE_REFUSED"
  | "ARCHIVE_PATH_REFUSED"
  | "ARCHIVE_FILES_CHANGED"
  | "ARCHIVE_SIGNATURE_INVALID"
  | "ARCHIVE_CHAIN_BROKEN"
  | "ARCHIVE_ROWS_MISMATCH";

interface ArchiveProblem {
  code: ArchiveProblemCode;
  message: string;
}

/** What to do about each kind of problem, for the error `archive restore` raises. */
const PROBLEM_HINTS: Record<ArchiveProblemCode, string> = {
  ARCHIVE_MANIFEST_INVALID:
    "restore only months written by `sessionhouse archive export`; take the month from an intact copy of the archive",
  ARCHIVE_TABLE_REFUSED: `an archive holds only the data tables (${ARCHIVE_TABLES.map((s) => s.table).join(", ")}); this month was not written by archive export: take it from an intact copy`,
  ARCHIVE_PATH_REFUSED:
    "an archive's files are <table>.parquet files inside the month's directory, never links or paths: take the month from an intact copy",
  ARCHIVE_FILES_CHANGED:
    "the month's files were changed after export: take it from an intact copy of the archive",
  ARCHIVE_SIGNATURE_INVALID:
    "check that --public-key (or SESSIONHOUSE_PUBLIC_KEY_FILE) is the key the archive was signed with; otherwise the month was changed or re-signed: take it from an intact copy",
  ARCHIVE_CHAIN_BROKEN:
    "a month of the archive directory was removed or changed: check it with `sessionhouse archive verify` and take the months from an intact copy",
  ARCHIVE_ROWS_MISMATCH:
    "the month's files do not hold what its manifest says: take it from an intact copy of the archive",
};

/** A file name of the month's own directory: no separator, no `..`, not absolute. */
function isPlainFileName(name: string): boolean {
  return (
    name !== "" &&
    name !== "." &&
    name !== ".." &&
    !name.includes("/") &&
    !name.includes("\\") &&
    !name.includes("\0") &&
    !isAbsolute(name)
  );
}

/** Reads archive files back: an engine of this process (verify), or the embedded warehouse. */
export type ArchiveReader = Pick<ScratchEngine, "rows">;

/** The embedded warehouse as a reader of local files. */
export const warehouseReader = (w: Warehouse): ArchiveReader => ({
  rows: (sql) => selectRows(w, sql),
});

interface MonthCheck {
  month: string;
  dir: string;
  /** Undefined when the manifest is not an archive manifest (see problems). */
  manifest: ArchiveManifestFields | undefined;
  manifestSha256: string | undefined;
  problems: ArchiveProblem[];
  signature: SignatureState;
  /** The month the manifest is chained to, when it is not in the directory (nor any before). */
  previousAbsent: string | undefined;
  rowsChecked: number;
}

/**
 * Everything one month's archive can be checked for from the archive directory alone, and what
 * both `archive verify` and `archive restore` trust: the manifest's shape and month; each table
 * one the archive format defines (ARCHIVE_TABLES) with its time column, and its file
 * `<table>.parquet`, a regular file of the month's directory listed in the manifest; every
 * file's SHA-256, nothing added, no link; the signature (by `trusted` when given); the link to
 * the previous month when that month is in the directory; and, with `reader`, each file's rows
 * and time range read back. An unsigned month passes with `allowUnsigned` even when a key is
 * given (its signature state says `unsigned`).
 */
async function checkMonth(
  root: string,
  month: string,
  options: CheckOptions = {},
): Promise<MonthCheck> {
  const dir = join(resolve(root), month);
  const result: MonthCheck = {
    month,
    dir,
    manifest: undefined,
    manifestSha256: undefined,
    problems: [],
    signature: { state: "unsigned" },
    previousAbsent: undefined,
    rowsChecked: 0,
  };
  if (lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink())
    addProblem(
      result,
      "ARCHIVE_PATH_REFUSED",
      `the month's directory ${dir} is a symbolic link, not a directory of the archive`,
    );
  const evidence = checkFiles(dir, options, result);
  if (evidence === undefined) return result;
  const m = archiveFields(evidence, month, result);
  if (m === undefined) return result;
  const listed = new Set(evidence.manifest.files.map((f) => f.path));
  const readable = checkTables(dir, m.tables, listed, result);
  checkLink(root, month, m.previous, result);
  checkSkipped(month, m.previous, m.skipped, result);
  if (options.reader !== undefined)
    await readBack(options.reader, dir, readable, result);
  return result;
}

interface CheckOptions {
  trusted?: KeyObject | undefined;
  allowUnsigned?: boolean;
  reader?: ArchiveReader | undefined;
}

function addProblem(
  result: MonthCheck,
  code: ArchiveProblemCode,
  message: string,
): void {
  result.problems.push({ code, message });
}

/** The files against the manifest, links and the signature; undefined: no manifest to read. */
function checkFiles(
  dir: string,
  options: CheckOptions,
  result: MonthCheck,
): EvidenceCheck | undefined {
  let evidence: EvidenceCheck;
  try {
    evidence = verifyEvidence(dir, { publicKey: options.trusted });
  } catch (err) {
    if (err instanceof FatalError && err.code === "EVIDENCE_INVALID") {
      addProblem(result, "ARCHIVE_MANIFEST_INVALID", err.message);
      return undefined;
    }
    throw err;
  }
  result.manifestSha256 = evidence.manifestSha256;
  result.signature = evidence.signature;
  for (const p of evidence.linkProblems)
    addProblem(result, "ARCHIVE_PATH_REFUSED", p);
  for (const p of evidence.fileProblems)
    addProblem(result, "ARCHIVE_FILES_CHANGED", p);
  if (!(options.allowUnsigned && evidence.signature.state === "unsigned"))
    for (const p of evidence.signatureProblems)
      addProblem(result, "ARCHIVE_SIGNATURE_INVALID", p);
  return evidence;
}

/** The manifest's fields as the archive format defines them, of this month; undefined: not. */
function archiveFields(
  evidence: EvidenceCheck,
  month: string,
  result: MonthCheck,
): ArchiveManifestFields | undefined {
  const parsed = manifestFieldsSchema.safeParse(evidence.manifest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    addProblem(
      result,
      "ARCHIVE_MANIFEST_INVALID",
      `not an archive manifest (${ARCHIVE_FORMAT}): ${issue === undefined ? "" : `${issue.path.join(".") || "(top)"}: ${issue.message}`}`,
    );
    return undefined;
  }
  const m: ArchiveManifestFields = parsed.data;
  result.manifest = m;
  if (m.month !== month)
    addProblem(
      result,
      "ARCHIVE_MANIFEST_INVALID",
      `the manifest is the archive of ${m.month}, not of ${month}`,
    );
  return m;
}

interface ReadableTable {
  spec: ArchiveSpec;
  table: ArchivedTable;
}

/** Each table the manifest lists against the archive format; those whose file can be read. */
function checkTables(
  dir: string,
  tables: readonly ArchivedTable[],
  listed: ReadonlySet<string>,
  result: MonthCheck,
): ReadableTable[] {
  const seen = new Set<string>();
  const readable: ReadableTable[] = [];
  for (const t of tables) {
    const spec = archiveSpec(t.table);
    if (spec === undefined) {
      addProblem(
        result,
        "ARCHIVE_TABLE_REFUSED",
        `names the table ${JSON.stringify(t.table)}, which is not one of the archive's tables`,
      );
      continue;
    }
    if (seen.has(t.table)) {
      addProblem(
        result,
        "ARCHIVE_TABLE_REFUSED",
        `names the table ${t.table} twice`,
      );
      continue;
    }
    seen.add(t.table);
    if (t.timeColumn !== spec.timeColumn)
      addProblem(
        result,
        "ARCHIVE_MANIFEST_INVALID",
        `${t.table}: time column ${JSON.stringify(t.timeColumn)}, the archive format's is ${spec.timeColumn}`,
      );
    if (fileReadable(dir, t, listed, result)) readable.push({ spec, table: t });
  }
  return readable;
}

/** A table's file is named as the format says, hashed, and a regular file of the directory. */
function fileReadable(
  dir: string,
  t: ArchivedTable,
  listed: ReadonlySet<string>,
  result: MonthCheck,
): boolean {
  const problem = (code: ArchiveProblemCode, message: string): false => {
    addProblem(result, code, message);
    return false;
  };
  if (t.file === "") {
    if (t.rows !== 0)
      problem(
        "ARCHIVE_MANIFEST_INVALID",
        `${t.table}: ${t.rows} rows and no file`,
      );
    return false;
  }
  if (!isPlainFileName(t.file))
    return problem(
      "ARCHIVE_PATH_REFUSED",
      `${t.table}: file ${JSON.stringify(t.file)} is not a plain file name inside the month's directory`,
    );
  if (t.file !== archiveFileName(t.table))
    return problem(
      "ARCHIVE_PATH_REFUSED",
      `${t.table}: file ${JSON.stringify(t.file)}, the archive format's is ${archiveFileName(t.table)}`,
    );
  if (!listed.has(t.file))
    return problem(
      "ARCHIVE_FILES_CHANGED",
      `${t.table}: ${t.file} is not among the manifest's files (not hashed)`,
    );
  const stat = lstatSync(join(dir, t.file), { throwIfNoEntry: false });
  if (stat === undefined) return false; // reported as missing by the files' check
  if (!stat.isFile())
    return problem(
      "ARCHIVE_PATH_REFUSED",
      `${t.table}: ${t.file} is not a regular file of the month's directory`,
    );
  return true;
}

/** Each file's rows and time range read back against what the manifest says. */
async function readBack(
  reader: ArchiveReader,
  dir: string,
  readable: readonly ReadableTable[],
  result: MonthCheck,
): Promise<void> {
  for (const { spec, table: t } of readable) {
    try {
      const [r] = await reader.rows<{
        rows: string;
        min_ms: string;
        max_ms: string;
      }>(parquetStatsSql(join(dir, t.file), spec.timeColumn));
      const s = parquetStats(r);
      result.rowsChecked += s.rows;
      if (
        s.rows !== t.rows ||
        iso(s.minTimeMs) !== t.minTime ||
        iso(s.maxTimeMs) !== t.maxTime
      )
        addProblem(
          result,
          "ARCHIVE_ROWS_MISMATCH",
          `${t.file} holds ${s.rows} rows from ${String(iso(s.minTimeMs))} to ${String(iso(s.maxTimeMs))}, the manifest says ${t.rows} from ${String(t.minTime)} to ${String(t.maxTime)}`,
        );
    } catch (err) {
      addProblem(
        result,
        "ARCHIVE_ROWS_MISMATCH",
        `${t.file} cannot be read as Parquet: ${errorMessage(err).split("\n")[0] ?? ""}`,
      );
    }
  }
}

/**
 * The month's link to the previous one: the latest month of the directory before it must be the
 * month the manifest names, with that manifest's SHA-256. A link to a month that is not in the
 * directory, with no month before, is `previousAbsent` (the caller decides).
 */
function checkLink(
  root: string,
  month: string,
  link: ArchiveManifestFields["previous"],
  result: MonthCheck,
): void {
  const prior = archivedMonths(resolve(root))
    .filter((x) => x < month)
    .at(-1);
  const broken = (message: string) =>
    result.problems.push({ code: "ARCHIVE_CHAIN_BROKEN", message });
  if (link === null) {
    if (prior !== undefined) broken(`starts a new chain after ${prior}`);
    return;
  }
  if (!MONTH.test(link.month) || link.month >= month) {
    broken(
      `chained to ${JSON.stringify(link.month)}, which is not a month before ${month}`,
    );
    return;
  }
  if (prior === undefined) {
    result.previousAbsent = link.month;
    return;
  }
  let priorSha: string;
  try {
    priorSha = readManifest(join(resolve(root), prior)).sha256;
  } catch (err) {
    broken(`the previous month ${prior} cannot be read: ${errorMessage(err)}`);
    return;
  }
  if (link.month !== prior || link.manifestSha256 !== priorSha)
    broken(
      `chained to ${link.month} ${link.manifestSha256}, but the archive's previous month is ${prior} ${priorSha} (a month was removed or changed)`,
    );
}

/**
 * The months between the month a manifest is chained to and itself must be the ones it records
 * as skipped, by whom and why: the chain has no silent gap.
 */
function checkSkipped(
  month: string,
  link: ArchiveManifestFields["previous"],
  skipped: SkippedMonths | undefined,
  result: MonthCheck,
): void {
  if (link === null || !MONTH.test(link.month) || link.month >= month) {
    if (skipped !== undefined)
      addProblem(
        result,
        "ARCHIVE_CHAIN_BROKEN",
        `records ${skipped.months.join(", ")} as skipped, and follows no month`,
      );
    return;
  }
  const gap = monthsBetween(link.month, month).join(", ");
  const recorded = skipped?.months.join(", ") ?? "";
  if (gap === recorded) return;
  addProblem(
    result,
    "ARCHIVE_CHAIN_BROKEN",
    gap === ""
      ? `follows ${link.month} directly, yet records ${recorded} as skipped`
      : `follows ${link.month}: ${gap} ${recorded === "" ? "missing from the chain, and no skip is recorded" : `missing from the chain, while the skip recorded names ${recorded}`}`,
  );
}

/** "2026-09 skipped by alice: reason", for verify's output. */
function skippedLine(month: string, s: SkippedMonths): string {
  return `${s.months.join(", ")} skipped before ${month} by ${s.by}: ${s.reason}`;
}

export interface VerifyResult {
  months: string[];
  /** SHA-256 of the last month's manifest. */
  head: string | null;
  problems: string[];
  /** What was not checked, and what that leaves open: one sentence each. */
  unchecked: string[];
  /** Months signed (whether or not by a key given). */
  signed: number;
  /** Months whose signature was checked against the key given. */
  signaturesVerified: number;
  rowsChecked: number;
  /** The months left out of the chain on purpose, with who and why: one line each. */
  skipped: string[];
}

/** The sentences `archive verify` prints for what it did not check. */
export const NOT_CHECKED = {
  signatures:
    "signatures not checked: no public key given (--public-key, or SESSIONHOUSE_PUBLIC_KEY_FILE)",
  head: "the last month is not checked against a head you keep: no --expect-head given; a removed last month would go unnoticed",
  rows: "rows and time ranges not read back: no engine to read the Parquet",
} as const;

/**
 * Checks every month under `root` (checkMonth), the chain from the first month to the last,
 * and the head against `expectHead`; says what it could not check (no key, no head).
 */
export async function verifyArchive(
  root: string,
  engine: ArchiveReader | undefined,
  options: {
    publicKey?: KeyObject | undefined;
    expectHead?: string | undefined;
  } = {},
): Promise<VerifyResult> {
  refusePatternPath(resolve(root));
  const months = archivedMonths(resolve(root));
  const problems: string[] = [];
  if (months.length === 0)
    problems.push(`no archived month (YYYY-MM/${MANIFEST_FILE}) in ${root}`);
  let signed = 0;
  let signaturesVerified = 0;
  let rowsChecked = 0;
  const skipped: string[] = [];
  let head: string | null = null;
  for (const month of months) {
    const check = await checkMonth(root, month, {
      trusted: options.publicKey,
      reader: engine,
    });
    problems.push(...check.problems.map((p) => `${month}: ${p.message}`));
    if (check.previousAbsent !== undefined)
      problems.push(
        `${month}: chained to ${check.previousAbsent}, which is not in the archive (a month was removed)`,
      );
    const skip = check.manifest?.skipped;
    if (skip !== undefined) skipped.push(skippedLine(month, skip));
    if (check.signature.state !== "unsigned") signed++;
    if (check.signature.state === "verified") signaturesVerified++;
    rowsChecked += check.rowsChecked;
    head = check.manifestSha256 ?? null;
  }
  if (options.expectHead !== undefined && options.expectHead !== head)
    problems.push(
      `the chain's head is ${String(head)}, not the expected ${options.expectHead} (the last month was removed, changed or added)`,
    );
  const unchecked: string[] = [];
  if (options.publicKey === undefined) unchecked.push(NOT_CHECKED.signatures);
  if (options.expectHead === undefined) unchecked.push(NOT_CHECKED.head);
  if (engine === undefined) unchecked.push(NOT_CHECKED.rows);
  return {
    months,
    head,
    problems,
    unchecked,
    signed,
    signaturesVerified,
    rowsChecked,
    skipped,
  };
}

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
