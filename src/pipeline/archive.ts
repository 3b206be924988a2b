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
import {
  applyHolds,
  ARCHIVE_FORMAT,
  ARCHIVE_TABLES,
  archiveFileName,
  archiveSpec,
  type ArchiveSpec,
  archiveSpecs,
  type ColumnType,
  exportMonth,
  isActive,
  listHolds,
  type MonthRange,
  openScratchEngine,
  parquetFileStats,
  parquetStats,
  parquetStatsSql,
  restoreFile,
  retireSupersededKeys,
  type RowStats,
  type ScratchEngine,
  selectRows,
  storedColumns,
  Tables,
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

export interface ArchiveManifestFields {
  format: typeof ARCHIVE_FORMAT;
  month: string;
  database: string;
  exportedAt: string;
  previous: { month: string; manifestSha256: string } | null;
  tables: ArchivedTable[];
}

/** The shape a manifest must have before any of its members is used (it is read from disk). */
const manifestFieldsSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  month: z.string(),
  database: z.string(),
  exportedAt: z.string(),
  previous: z
    .object({ month: z.string(), manifestSha256: z.string() })
    .nullable(),
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
}

/**
 * Writes the month's archive under `root/month`, chained to the latest month archived before
 * it. A month already archived, or one before the latest archived month, is refused: archives
 * are never rewritten, and the chain only grows at its end. So is a month that has not ended
 * `settleMs` ago (see archiveSettleMs): what arrived later would reach no archive.
 */
export async function exportArchive(
  w: Warehouse,
  options: ExportOptions,
): Promise<ExportResult> {
  const started = Date.now();
  const nowMs = options.nowMs ?? Date.now();
  const range = monthRange(options.month);
  checkSettled(options.month, range, nowMs, options.settleMs ?? 0);
  const { root, dir, last } = newMonthDir(options.root, options.month);
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
      previous:
        last === undefined
          ? null
          : {
              month: last,
              manifestSha256: readManifest(join(root, last)).sha256,
            },
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
    return {
      dir,
      tables,
      head: sha256,
      rows: tables.reduce((n, t) => n + t.rows, 0),
      ms: Date.now() - started,
    };
  } catch (err) {
    // No half archive is left to be taken for a whole one.
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
    const columns = await storedColumns(w, spec.table);
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
  const months = archivedMonths(resolve(root));
  const problems: string[] = [];
  if (months.length === 0)
    problems.push(`no archived month (YYYY-MM/${MANIFEST_FILE}) in ${root}`);
  let signed = 0;
  let signaturesVerified = 0;
  let rowsChecked = 0;
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
  };
}

export interface RestoreResult {
  tables: Array<{ table: string; rows: number }>;
  /** What the restore did not check or accepted on request, for stderr. */
  notes: string[];
}

/**
 * Loads a month's archive into `w` (migrated) when it passes the checks `archive verify` makes
 * of it (checkMonth): a signed month needs the key it must be signed by (`trusted`), an
 * unsigned one `allowUnsigned`, and every archived table's columns must be exactly the target
 * table's. Nothing is written unless everything passes, and only the archive's data tables are
 * written; restored sessions are flagged by the active holds of `w`, and one stored since under
 * another start time keeps only its latest key (session-keys.ts). Restoring the same month
 * again changes nothing (see restoreFile).
 */
export async function restoreArchive(
  w: Warehouse,
  options: RestoreOptions,
): Promise<RestoreResult> {
  monthRange(options.month);
  const dir = join(resolve(options.root), options.month);
  if (!existsSync(join(dir, MANIFEST_FILE)))
    throw new UsageError(`${dir} holds no archive (no ${MANIFEST_FILE})`, {
      hint: "give the directory archive export wrote to (--from) and an archived month",
    });
  const check = await checkForRestore(w, options);
  const { manifest, notes } = trustedMonth(check, options, dir);
  const files = manifest.tables.filter((t) => t.file !== "");
  await checkColumns(w, files, options.month);
  const tables: RestoreResult["tables"] = [];
  await withMergesPaused(w, async () => {
    for (const t of files) {
      await restoreFile(
        w,
        t.table,
        t.columns,
        join(dir, archiveFileName(t.table)),
        `archive:${String(check.manifestSha256)}:${t.table}`,
      );
      tables.push({ table: t.table, rows: t.rows });
    }
  });
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

interface RestoreOptions {
  month: string;
  root: string;
  trusted?: KeyObject | undefined;
  allowUnsigned?: boolean;
}

/** The month checked as verify checks it, its files read back by the engine or a scratch one. */
async function checkForRestore(
  w: Warehouse,
  options: RestoreOptions,
): Promise<MonthCheck> {
  let scratch: ScratchEngine | undefined;
  try {
    const reader =
      w.kind === "embedded"
        ? warehouseReader(w)
        : (scratch = await openScratchEngine());
    return await checkMonth(options.root, options.month, {
      trusted: options.trusted,
      allowUnsigned: options.allowUnsigned === true,
      reader,
    });
  } finally {
    scratch?.close();
  }
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
