// Exporting a month: one Parquet file per table and a manifest chained to the previous archived
// month, refused before anything is written when the month is not settled, synced and whole,
// checked as verify checks it once written, and its rows marked archived.
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../../config/index.js";
import {
  MANIFEST_FILE,
  readManifest,
  writeManifest,
} from "../../evidence/manifest.js";
import { FatalError, UsageError, errorMessage } from "../../util/errors.js";
import { makePrivateDir, type Sharing } from "../../util/private-files.js";
import { SESSIONS_STREAM } from "../names.js";
import { allCheckpoints, coveredSpans } from "../status.js";
import {
  ARCHIVE_FORMAT,
  archiveFileName,
  archivedColumns,
  type ArchiveSpec,
  archiveSpecs,
  type ColumnType,
  exportMonth,
  type MonthRange,
  openScratchEngine,
  parquetFileStats,
  parquetStats,
  parquetStatsSql,
  refusePatternPath,
  type RowStats,
  type ScratchEngine,
  Tables,
  thinnedSessionDays,
  type Warehouse,
} from "../../warehouse/index.js";
import { checkMonth, warehouseReader } from "./check.js";
import { markMonth } from "./mark.js";
import {
  archivedMonths,
  type ArchivedTable,
  type ArchiveManifestFields,
  iso,
  monthRange,
  monthsBetween,
  type SkippedMonths,
} from "./months.js";

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

const msOf = (plain: string): number =>
  Date.parse(`${plain.replace(" ", "T")}Z`);
