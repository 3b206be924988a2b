// Monthly archives that outlive the database: a directory per month (`<root>/YYYY-MM/`) with one
// Parquet file per table and a manifest (src/evidence/manifest.ts: every file's SHA-256, the
// optional Ed25519 signature) that records each table's rows, time range and schema and the
// SHA-256 of the previous archived month's manifest. The months form a chain: removing or
// editing one breaks the next one's link, and the last one's hash (the head) is what an
// operator keeps in write-once storage.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  MANIFEST_FILE,
  readManifest,
  verifyEvidence,
  writeManifest,
} from "../evidence/manifest.js";
import { UsageError } from "../util/errors.js";
import {
  archiveSpecs,
  exportMonth,
  openScratchEngine,
  parquetFileStats,
  parquetStats,
  parquetStatsSql,
  restoreFile,
  storedColumns,
  type ArchiveSpec,
  type ColumnType,
  type MonthRange,
  type RowStats,
  type ScratchEngine,
} from "../warehouse/archive.js";
import type { Warehouse } from "../warehouse/client.js";

export const ARCHIVE_FORMAT = "sessionhouse-archive/1";
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

/** "2026-10" → its range; a usage error for anything else. */
export function monthRange(month: string): MonthRange {
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
export function archivedMonths(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => MONTH.test(d) && existsSync(join(root, d, MANIFEST_FILE)))
    .sort();
}

const iso = (ms: number | null) =>
  ms === null ? null : new Date(ms).toISOString();

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
 * are never rewritten, and the chain only grows at its end.
 */
export async function exportArchive(
  w: Warehouse,
  options: {
    month: string;
    root: string;
    signingKeyFile?: string | undefined;
    nowMs?: number;
  },
): Promise<ExportResult> {
  const started = Date.now();
  const range = monthRange(options.month);
  const root = resolve(options.root);
  const months = archivedMonths(root);
  if (months.includes(options.month))
    throw new UsageError(`${options.month} is archived already in ${root}`, {
      hint: "an archive is never rewritten; verify it with `sessionhouse archive verify`",
    });
  const last = months.at(-1);
  if (last !== undefined && last > options.month)
    throw new UsageError(
      `${root} holds ${last}, later than ${options.month}: the chain only grows at its end`,
      { hint: "archive months in order, or into another directory" },
    );
  const dir = join(root, options.month);
  if (existsSync(dir))
    throw new UsageError(`${dir} exists but holds no ${MANIFEST_FILE}`, {
      hint: "an earlier export stopped half way: remove the directory and export again",
    });
  mkdirSync(dir, { recursive: true });
  let engine: ScratchEngine | undefined;
  const scratch = async () => (engine ??= await openScratchEngine());
  try {
    const tables: ArchivedTable[] = [];
    for (const spec of await archiveSpecs(w)) {
      const columns = await storedColumns(w, spec.table);
      const file = `${spec.table}.parquet`;
      const stats = await exportTable(
        w,
        spec,
        columns,
        range,
        join(dir, file),
        scratch,
      );
      if (stats.rows === 0 && spec.table !== "sessions") continue;
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
    const fields: ArchiveManifestFields = {
      format: ARCHIVE_FORMAT,
      month: options.month,
      database: w.database,
      exportedAt: new Date(options.nowMs ?? Date.now()).toISOString(),
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
): Promise<RowStats> {
  await exportMonth(w, spec, columns, range, path);
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

export interface VerifyResult {
  months: string[];
  /** SHA-256 of the last month's manifest. */
  head: string | null;
  problems: string[];
  signed: number;
  rowsChecked: number;
}

/**
 * Checks every month under `root`: each file's SHA-256 and nothing added (manifest.ts), the
 * signature (with `publicKeyFile`: by that key), the chain from the first month to the last,
 * the head against `expectHead`, and each file's rows and time range read back by `engine`.
 */
export async function verifyArchive(
  root: string,
  engine: ScratchEngine | undefined,
  options: {
    publicKeyFile?: string | undefined;
    expectHead?: string | undefined;
  } = {},
): Promise<VerifyResult> {
  const months = archivedMonths(resolve(root));
  const problems: string[] = [];
  if (months.length === 0)
    problems.push(`no archived month (YYYY-MM/${MANIFEST_FILE}) in ${root}`);
  let previous: { month: string; sha256: string } | undefined;
  let signed = 0;
  let rowsChecked = 0;
  for (const month of months) {
    const dir = join(resolve(root), month);
    const check = verifyEvidence(dir, { publicKeyFile: options.publicKeyFile });
    problems.push(...check.problems.map((p) => `${month}: ${p}`));
    if (check.signed) signed++;
    const m = check.manifest as unknown as Partial<ArchiveManifestFields>;
    if (m.format !== ARCHIVE_FORMAT || m.month !== month)
      problems.push(
        `${month}: not the archive of ${month} (format ${String(m.format)}, month ${String(m.month)})`,
      );
    const link = m.previous ?? null;
    if (previous === undefined && link !== null)
      problems.push(
        `${month}: chained to ${link.month}, which is not in the archive (a month was removed)`,
      );
    if (previous !== undefined) {
      if (link === null)
        problems.push(`${month}: starts a new chain after ${previous.month}`);
      else if (
        link.month !== previous.month ||
        link.manifestSha256 !== previous.sha256
      )
        problems.push(
          `${month}: chained to ${link.month} ${link.manifestSha256}, but the archive's previous month is ${previous.month} ${previous.sha256} (a month was removed or changed)`,
        );
    }
    if (engine !== undefined)
      for (const t of m.tables ?? []) {
        if (t.file === "") continue;
        const path = join(dir, t.file);
        if (!existsSync(path)) continue; // reported as missing above
        try {
          const [r] = await engine.rows<{
            rows: string;
            min_ms: string;
            max_ms: string;
          }>(parquetStatsSql(path, t.timeColumn));
          const s = parquetStats(r);
          rowsChecked += s.rows;
          if (
            s.rows !== t.rows ||
            iso(s.minTimeMs) !== t.minTime ||
            iso(s.maxTimeMs) !== t.maxTime
          )
            problems.push(
              `${month}: ${t.file} holds ${s.rows} rows from ${String(iso(s.minTimeMs))} to ${String(iso(s.maxTimeMs))}, the manifest says ${t.rows} from ${String(t.minTime)} to ${String(t.maxTime)}`,
            );
        } catch (err) {
          problems.push(
            `${month}: ${t.file} cannot be read as Parquet: ${(err as Error).message.split("\n")[0] ?? ""}`,
          );
        }
      }
    previous = { month, sha256: check.manifestSha256 };
  }
  const head = previous?.sha256 ?? null;
  if (options.expectHead !== undefined && options.expectHead !== head)
    problems.push(
      `the chain's head is ${String(head)}, not the expected ${options.expectHead} (the last month was removed, changed or added)`,
    );
  return { months, head, problems, signed, rowsChecked };
}

export interface RestoreResult {
  tables: Array<{ table: string; rows: number }>;
}

/**
 * Loads a month's archive into `w` (migrated), after checking the month's files against its
 * manifest. Restoring the same month again changes nothing (see restoreFile).
 */
export async function restoreArchive(
  w: Warehouse,
  options: { month: string; root: string; publicKeyFile?: string | undefined },
): Promise<RestoreResult> {
  monthRange(options.month);
  const dir = join(resolve(options.root), options.month);
  if (!existsSync(join(dir, MANIFEST_FILE)))
    throw new UsageError(`${dir} holds no archive (no ${MANIFEST_FILE})`, {
      hint: "give the directory archive export wrote to (--from) and an archived month",
    });
  const check = verifyEvidence(dir, { publicKeyFile: options.publicKeyFile });
  if (check.problems.length > 0)
    throw new UsageError(
      `the archive of ${options.month} does not match its manifest:\n  ${check.problems.join("\n  ")}`,
      { hint: "restore from an intact copy of the archive" },
    );
  const m = check.manifest as unknown as ArchiveManifestFields;
  const tables: RestoreResult["tables"] = [];
  for (const t of m.tables) {
    if (t.file === "") continue;
    await restoreFile(
      w,
      t.table,
      t.columns,
      join(dir, t.file),
      `archive:${check.manifestSha256}:${t.table}`,
    );
    tables.push({ table: t.table, rows: t.rows });
  }
  return { tables };
}
