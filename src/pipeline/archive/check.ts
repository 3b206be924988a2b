// Checking one archived month: `checkMonth` is the one check of a month that `archive verify`
// reports, `archive restore` requires, and export makes of what it has just written.
import type { KeyObject } from "node:crypto";
import { lstatSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import {
  readManifest,
  verifyEvidence,
  type EvidenceCheck,
  type SignatureState,
} from "../../evidence/manifest.js";
import { FatalError, errorMessage } from "../../util/errors.js";
import {
  ARCHIVE_FORMAT,
  ARCHIVE_TABLES,
  archiveFileName,
  archiveSpec,
  type ArchiveSpec,
  openScratchEngine,
  parquetStats,
  parquetStatsSql,
  type ScratchEngine,
  selectRows,
  type Warehouse,
} from "../../warehouse/index.js";
import {
  archivedMonths,
  type ArchivedTable,
  type ArchiveManifestFields,
  iso,
  manifestFieldsSchema,
  MONTH,
  monthsBetween,
  type SkippedMonths,
} from "./months.js";

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
export const PROBLEM_HINTS: Record<ArchiveProblemCode, string> = {
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

export interface MonthCheck {
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
export async function checkMonth(
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

/**
 * A month of the archive checked as verify checks it (checkMonth), its files read back by the
 * warehouse's engine (embedded) or a scratch one (a server cannot read this machine's files).
 */
export async function checkWithEngine(
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
