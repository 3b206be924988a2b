// The archive format and its SQL: which tables a month is archived from and under which file
// name, each as Parquet written by the engine (deduplicated with FINAL, sorted by the table's
// key), the statistics a manifest records and a verifier recomputes from the file, and the
// restore of a file. src/pipeline/archive/ exports, checks, verifies and restores the months.
import { chmodSync, createReadStream } from "node:fs";
import {
  modesFor,
  openPrivateFile,
  type Sharing,
} from "../util/private-files.js";
import { pipeline } from "node:stream/promises";
import { UsageError } from "../util/errors.js";
import type { Warehouse } from "./client.js";
import { mutationTarget, SINGLE } from "./cluster.js";
import { qualified, quoteString } from "./sql.js";
import { SinkError } from "./errors.js";
import { existingTables } from "./migrate.js";
import { SESSIONS_ROLLUP_SOURCE } from "./rollups.js";
import { selectCount, selectRows, storageTableDdl } from "./select.js";
import { sessionColumnsAddedAfter } from "./session-rows.js";
import { Tables } from "./tables.js";

/** A table as archived: the time column that places a row in a month, and the file's order. */
export interface ArchiveSpec {
  table: string;
  timeColumn: string;
  orderBy: string;
  /** Rows superseded by a re-fetch (count 0) are not history. */
  filter?: string;
  /**
   * Columns a later migration added whose default is what an archived row means: a month
   * archived before them lacks them, and its rows take the default when restored.
   */
  laterColumns?: readonly string[];
  /**
   * The table has a retention and the `archived` flag (migrations/0039): `archive export` marks
   * the month's rows archived, and with an archive directory configured the TTL deletes only
   * those. The table is partitioned by the month of its time column.
   */
  flagged?: boolean;
}

/**
 * The oldest schema a month was archived under: the archive format was first written by a
 * database migrated to 0018 (before 0023 added `is_deleted`). A table's columns added by a later
 * migration may be absent from an archive's file (ArchiveSpec.laterColumns).
 */
const ARCHIVED_SINCE_MIGRATION = 18;

/** The `format` of an archive month's manifest. */
export const ARCHIVE_FORMAT = "sessionhouse-archive/1";

/** Where `archive export` writes when no --to is given (one YYYY-MM directory per month). */
export const DEFAULT_ARCHIVE_DIR = "./archive";

/**
 * The tables the archive format holds, and the only ones `archive restore` writes: the data
 * tables, never bookkeeping (checkpoints, runs), holds or retention settings. A table's file in
 * a month's directory is `<table>.parquet`.
 */
export const ARCHIVE_TABLES: readonly ArchiveSpec[] = [
  {
    table: Tables.sessions,
    timeColumn: "start_time",
    orderBy: "start_time, id",
    // Archived from FINAL, every row is a live one (is_deleted, 0023); a row is archived once
    // its month's archive is written (archived, 0039): read from the sessions' column list.
    laterColumns: sessionColumnsAddedAfter(ARCHIVED_SINCE_MIGRATION),
    flagged: true,
  },
  {
    table: Tables.aggHistogram,
    timeColumn: "bucket_time",
    orderBy: "job, level, bucket_time, key1, key2, key3",
    filter: "count > 0",
    laterColumns: ["archived"],
    flagged: true,
  },
  {
    table: Tables.aggTopValues,
    timeColumn: "window_start",
    orderBy: "job, member, window_start, key",
    filter: "count > 0",
    laterColumns: ["archived"],
    flagged: true,
  },
  {
    table: Tables.aggWindows,
    timeColumn: "window_start",
    orderBy: "job, window_start",
  },
  ...[
    Tables.cloudIntegrationsHistory,
    Tables.inventoryColumnsHistory,
    Tables.identityLinksHistory,
    Tables.nativeUsersHistory,
    Tables.userDevicesHistory,
    Tables.usersHistory,
  ].map((table): ArchiveSpec => ({
    table,
    timeColumn: "valid_from",
    orderBy: "id, valid_from",
  })),
];

/** The archive's spec of `table`; undefined for a table the archive format does not hold. */
export function archiveSpec(table: string): ArchiveSpec | undefined {
  return ARCHIVE_TABLES.find((s) => s.table === table);
}

/** The archive's file name of a table. */
export const archiveFileName = (table: string) => `${table}.parquet`;

/** The tables of a month's archive that exist here. */
export async function archiveSpecs(w: Warehouse): Promise<ArchiveSpec[]> {
  const tables = await existingTables(w);
  return ARCHIVE_TABLES.filter((s) => tables.has(s.table));
}

export interface ColumnType {
  name: string;
  type: string;
}

/** The stored columns of a table (not the ones it computes itself), in order. */
export async function storedColumns(
  w: Warehouse,
  table: string,
): Promise<ColumnType[]> {
  return selectRows<ColumnType>(
    w,
    `SELECT name, type FROM system.columns
     WHERE database = {db:String} AND table = {table:String}
       AND default_kind NOT IN ('MATERIALIZED', 'ALIAS', 'EPHEMERAL')
     ORDER BY position`,
    { db: w.database, table },
  );
}

/**
 * The columns a table's rows are archived with: its stored columns but the `archived` flag of a
 * flagged table, which says what this database did with the row, not what the row is (a
 * restore marks the rows it loads archived).
 */
export async function archivedColumns(
  w: Warehouse,
  spec: ArchiveSpec,
): Promise<ColumnType[]> {
  const columns = await storedColumns(w, spec.table);
  return spec.flagged === true
    ? columns.filter((c) => c.name !== "archived")
    : columns;
}

/** Row count and time range of a set of rows, times as epoch milliseconds. */
export interface RowStats {
  rows: number;
  minTimeMs: number | null;
  maxTimeMs: number | null;
}

const STATS = (col: string) =>
  `count() AS rows, toUnixTimestamp64Milli(toDateTime64(min(${col}), 3, 'UTC')) AS min_ms, toUnixTimestamp64Milli(toDateTime64(max(${col}), 3, 'UTC')) AS max_ms`;

function toStats(
  r: { rows: string; min_ms: string; max_ms: string } | undefined,
): RowStats {
  const rows = Number(r?.rows ?? 0);
  return {
    rows,
    minTimeMs: rows === 0 ? null : Number(r?.min_ms),
    maxTimeMs: rows === 0 ? null : Number(r?.max_ms),
  };
}

function monthWhere(spec: ArchiveSpec): string {
  const t = spec.timeColumn;
  return `${t} >= toDateTime64({from:String}, 3, 'UTC') AND ${t} < toDateTime64({to:String}, 3, 'UTC')${spec.filter ? ` AND ${spec.filter}` : ""}`;
}

const MiB = 1024 * 1024;

/**
 * The row groups of every archive file: at most 100,000 rows or 32 MiB uncompressed. The
 * writer holds one row group while it encodes it and a reader one while it decodes it, so a
 * month of any size is written and read in the same memory (the engine's defaults, a million
 * rows or 512 MiB, let the writer of a month hold half a gigabyte and more).
 */
const PARQUET_ROW_GROUPS = {
  output_format_parquet_row_group_size: "100000",
  output_format_parquet_row_group_size_bytes: String(32 * MiB),
};

/**
 * The embedded engine runs in this process, so what it holds is this process's memory: blocks
 * of 8,192 rows through the pipeline, one row group encoded at a time (no parallel encoding,
 * which holds a row group per thread). The embedded session keeps a query's settings for the
 * process's later queries; the archive commands end after their export or restore.
 */
const EMBEDDED_WRITE = {
  ...PARQUET_ROW_GROUPS,
  output_format_parquet_parallel_encoding: 0,
  max_block_size: "8192",
};

/**
 * A local Parquet file read by an engine of this process: with `pread`, not mapped into memory
 * (the embedded engine's default maps the whole file, and the pages read count as resident),
 * and the reader's read-ahead stopped at 64 MiB (its default is 4 GiB, the whole month).
 */
const LOCAL_READ = {
  storage_file_read_method: "pread" as const,
  input_format_parquet_memory_high_watermark: String(64 * MiB),
};

/**
 * The restore's insert on the embedded engine: blocks of 8,192 rows read, at most 16,384 rows
 * or 8 MiB inserted. What the insert holds grows with its block's bytes (each column's buffers
 * of the part being written, and the views on `sessions` fed the same block): at a month of
 * 8.5 million sessions, 16 MiB blocks held about 0.95 GiB, 8 MiB blocks about 0.75 GiB, and the
 * block size of the Parquet read or one reader thread changed nothing.
 */
const EMBEDDED_RESTORE = {
  ...LOCAL_READ,
  input_format_parquet_max_block_size: "8192",
  input_format_parquet_prefer_block_bytes: String(4 * MiB),
  max_block_size: "8192",
  max_insert_block_size: "16384",
  min_insert_block_size_rows: "16384",
  min_insert_block_size_bytes: String(8 * MiB),
};

/** `LOCAL_READ` as a SETTINGS clause, for the engines that take SQL only (the scratch engine). */
const LOCAL_READ_CLAUSE = `SETTINGS ${Object.entries(LOCAL_READ)
  .map(([k, v]) => `${k} = ${quoteString(v)}`)
  .join(", ")}`;

/**
 * What the engine's file() reads as a pattern, not as a name: `*`, `?` and `{a,b}` / `{1..9}`
 * (the engine offers no escape for them: a backslash is taken as part of the name). A path with
 * one would have the engine write nothing (its file() of a pattern is read-only) or read other
 * files than those hashed, so an archive path holding one is refused.
 */
const FILE_PATTERN = /[*?{}]/;

/** Refuses a path the engine's file() would read as a pattern (FILE_PATTERN). */
export function refusePatternPath(path: string): void {
  const found = FILE_PATTERN.exec(path);
  if (found === null) return;
  throw new UsageError(
    `the archive path ${JSON.stringify(path)} holds ${JSON.stringify(found[0])}, which the engine reads as a file name pattern (* ? { }): it would read other files than the ones hashed`,
    {
      hint: "keep archives in a directory whose path holds none of * ? { }: rename it, or give another directory",
    },
  );
}

/** A local path as the argument of the engine's file(): a name, never a pattern. */
function fileArg(path: string): string {
  refusePatternPath(path);
  return quoteString(path);
}

/** A month: its first instant and the next month's, as "YYYY-MM-DD 00:00:00". */
export interface MonthRange {
  from: string;
  to: string;
}

/**
 * Writes the month's rows of a table to `path` as Parquet, deduplicated (FINAL) and sorted. The
 * embedded engine writes the file itself (INSERT INTO FUNCTION file), reading the table in its
 * key's order (no sort of the month) and holding one row group at a time; a server, or the read
 * access of the service that holds the embedded engine, encodes it and the answer is streamed
 * to the file a chunk at a time. No row passes through JavaScript.
 */
export async function exportMonth(
  w: Warehouse,
  spec: ArchiveSpec,
  columns: readonly ColumnType[],
  month: MonthRange,
  path: string,
  sharing: Sharing = {},
): Promise<void> {
  const { file: mode } = modesFor(sharing);
  const select = `SELECT ${columns.map((c) => `\`${c.name}\``).join(", ")}
    FROM ${qualified(w, spec.table)} FINAL
    WHERE ${monthWhere(spec)}
    ORDER BY ${spec.orderBy}`;
  if (w.kind === "embedded") {
    await w.client.command({
      query: `INSERT INTO FUNCTION file(${fileArg(path)}, 'Parquet') ${select}`,
      query_params: { ...month },
      clickhouse_settings: EMBEDDED_WRITE,
    });
    // The engine creates the file with the process's umask; the month's private directory
    // keeps it from others meanwhile.
    try {
      chmodSync(path, mode);
    } catch (err) {
      // No row in the month: the engine wrote no file.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    return;
  }
  const rs = await w.client.exec({
    query: `${select} FORMAT Parquet`,
    query_params: { ...month },
    clickhouse_settings: PARQUET_ROW_GROUPS,
  });
  await pipeline(
    rs.stream,
    (await openPrivateFile(path, sharing)).createWriteStream(),
  );
}

/**
 * Loads a Parquet file of the archive into its table. The insert carries a deduplication token
 * of the file's hash, so restoring the same file again is dropped by the engine; rows already
 * there collapse under FINAL as any re-read does. The embedded engine reads the file itself, a
 * row group at a time (EMBEDDED_RESTORE); a server gets the file streamed as the insert's body.
 */
export async function restoreFile(
  w: Warehouse,
  table: string,
  columns: readonly ColumnType[],
  path: string,
  token: string,
): Promise<void> {
  const names = columns.map((c) => `\`${c.name}\``).join(", ");
  const settings = {
    insert_deduplicate: 1 as const,
    insert_deduplication_token: token,
  };
  if (w.kind === "embedded") {
    await w.client.command({
      query: `INSERT INTO ${qualified(w, table)} (${names}) SELECT ${names} FROM file(${fileArg(path)}, 'Parquet')`,
      clickhouse_settings: { ...EMBEDDED_RESTORE, ...settings },
    });
    return;
  }
  await w.client.insert({
    table: qualified(w, table),
    columns: columns.map((c) => c.name) as [string, ...string[]],
    values: createReadStream(path),
    format: "Parquet",
    clickhouse_settings: settings,
  });
}

/**
 * Runs `load` with the embedded engine's background merges of `sessions` stopped, and starts
 * them again after. The engine runs in this process: merging the session parts a restore
 * writes while it writes them took memory that grew with the month (a 1 GB month's file: 1.0 GiB
 * peak with merges, 0.75 GiB without); they are merged later, in the background of the process
 * that opens the data directory next. The small tables the views on `sessions` feed
 * (`session_keys` and the first-seen tables) merge as they are written: stopped too, they held
 * a part per insert block, and the restore's read of every session key (retireSupersededKeys)
 * read those hundreds of parts side by side, 1.5 GB at 8.5 million sessions. A server merges
 * in its own memory, as it always does.
 */
export async function withMergesPaused<T>(
  w: Warehouse,
  load: () => Promise<T>,
): Promise<T> {
  if (w.kind !== "embedded") return load();
  const sessions = qualified(w, Tables.sessions);
  await w.client.command({ query: `SYSTEM STOP MERGES ${sessions}` });
  try {
    return await load();
  } finally {
    await w.client.command({ query: `SYSTEM START MERGES ${sessions}` });
  }
}

/** Rows and time range of a Parquet file, read back by an engine that reads local files. */
export function parquetStatsSql(path: string, timeColumn: string): string {
  return `SELECT ${STATS(timeColumn)} FROM file(${fileArg(path)}, 'Parquet') ${LOCAL_READ_CLAUSE}`;
}

/** The same, read by `w`'s engine from a file on this machine (the embedded engine). */
export async function parquetFileStats(
  w: Warehouse,
  path: string,
  timeColumn: string,
): Promise<RowStats> {
  const [r] = await selectRows<{
    rows: string;
    min_ms: string;
    max_ms: string;
  }>(w, parquetStatsSql(path, timeColumn));
  return toStats(r);
}

export function parquetStats(
  r: { rows: string; min_ms: string; max_ms: string } | undefined,
): RowStats {
  return toStats(r);
}

/** An engine of this process on a scratch directory, to read archive files back (verify). */
export interface ScratchEngine {
  rows<T>(sql: string): Promise<T[]>;
  close(): void;
}

export async function openScratchEngine(): Promise<ScratchEngine> {
  let Session: new () => {
    query(sql: string, format: string): string;
    cleanup(): void;
  };
  try {
    const specifier = "chdb";
    ({ Session } = (await import(specifier)) as { Session: typeof Session });
  } catch (err) {
    throw new SinkError(
      "EMBEDDED_UNAVAILABLE",
      "reading the archive's Parquet back needs the embedded engine (the chdb package), which is not installed",
      {
        cause: err,
        hint: "run archive verify where sessionhouse is installed with its optional dependencies",
      },
    );
  }
  const session = new Session();
  return {
    rows: <T>(sql: string) =>
      Promise.resolve(
        session
          .query(sql, "JSONEachRow")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as T),
      ),
    close: () => session.cleanup(),
  };
}

/** The partition of a month in a table partitioned by toYYYYMM of its time column. */
function monthPartition(month: MonthRange): string {
  return month.from.slice(0, 7).replace("-", "");
}

/** A flagged table's rows of the month fetched before `{before}` and not marked archived. */
function unmarkedWhere(spec: ArchiveSpec): string {
  const t = spec.timeColumn;
  return `${t} >= toDateTime64({from:String}, 3, 'UTC') AND ${t} < toDateTime64({to:String}, 3, 'UTC')
    AND fetched_at < fromUnixTimestamp64Milli({before:Int64}, 'UTC') AND archived = false`;
}

/** How many rows of a table's month markArchived would mark (0 for a table not flagged). */
export async function unmarkedRows(
  w: Warehouse,
  spec: ArchiveSpec,
  month: MonthRange,
  fetchedBeforeMs: number,
): Promise<number> {
  if (spec.flagged !== true) return 0;
  return selectCount(
    w,
    `SELECT count() AS n FROM ${qualified(w, spec.table)} WHERE ${unmarkedWhere(spec)}`,
    { ...month, before: fetchedBeforeMs },
  );
}

/**
 * Marks archived the rows of a flagged table (ArchiveSpec.flagged) in `month` fetched before
 * `fetchedBeforeMs` (the instant the export began reading: rows fetched later may not be in the
 * files, and stay unmarked), then has the engine apply the TTL to them again (the flag's
 * mutation alone does not; see applyHolds). Waits for both mutations; returns the rows marked.
 * Superseded rows (a re-read's older version, a tombstone, a count of 0) are marked too: they
 * are not history, and FINAL never shows them.
 */
export async function markArchived(
  w: Warehouse,
  spec: ArchiveSpec,
  month: MonthRange,
  fetchedBeforeMs: number,
): Promise<number> {
  const rows = await unmarkedRows(w, spec, month, fetchedBeforeMs);
  if (rows === 0) return 0;
  const target = mutationTarget(w.cluster ?? SINGLE, w.database, spec.table);
  const partition = `IN PARTITION ID ${quoteString(monthPartition(month))}`;
  await w.client.command({
    query: `ALTER TABLE ${target} UPDATE archived = true ${partition} WHERE ${unmarkedWhere(spec)}`,
    query_params: { ...month, before: fetchedBeforeMs },
    clickhouse_settings: { mutations_sync: "2" },
  });
  if (/\bTTL\b/.test(await storageTableDdl(w, spec.table)))
    await w.client.command({
      query: `ALTER TABLE ${target} MATERIALIZE TTL ${partition}`,
      clickhouse_settings: { mutations_sync: "2" },
    });
  return rows;
}

/** Rows of a table in `month` as the archive counts them: FINAL, with the spec's filter. */
export async function monthRows(
  w: Warehouse,
  spec: ArchiveSpec,
  month: MonthRange,
): Promise<number> {
  return selectCount(
    w,
    `SELECT count() AS n FROM ${qualified(w, spec.table)} FINAL WHERE ${monthWhere(spec)}`,
    { ...month },
  );
}

/** A day whose stored sessions are fewer than the rollups counted when they computed it. */
export interface ThinnedDay {
  day: string;
  /** Sessions of the day when its rollup was last computed (`rollup_days`). */
  recorded: number;
  /** Sessions of the day stored now (FINAL, as the rollup and the archive count them). */
  stored: number;
}

/**
 * The days of `month` that hold fewer sessions than the rollups recorded: rows the retention
 * (or anything else) removed since. The rollups compute a day again whenever its rows change,
 * but never a day the retention may have begun to delete, so their count is what was stored.
 */
export async function thinnedSessionDays(
  w: Warehouse,
  month: MonthRange,
): Promise<ThinnedDay[]> {
  const rows = await selectRows<{
    day: string;
    recorded: string;
    stored: string;
  }>(
    w,
    `SELECT toString(r.day) AS day, r.recorded AS recorded, s.stored AS stored
     FROM (
       SELECT day, argMax(rows, computed_at) AS recorded
       FROM ${qualified(w, Tables.rollupDays)}
       WHERE source = {source:String}
         AND day >= toDate({from:String}) AND day < toDate({to:String})
       GROUP BY day
     ) AS r
     LEFT JOIN (
       SELECT toDate(start_time) AS day, count() AS stored
       FROM ${qualified(w, Tables.sessions)} FINAL
       WHERE start_time >= toDateTime64({from:String}, 3, 'UTC') AND start_time < toDateTime64({to:String}, 3, 'UTC')
       GROUP BY day
     ) AS s ON s.day = r.day
     -- A day without a stored session joins with stored = 0 (join_use_nulls is off).
     WHERE s.stored < r.recorded
     ORDER BY r.day`,
    { ...month, source: SESSIONS_ROLLUP_SOURCE },
  );
  return rows.map((r) => ({
    day: r.day,
    recorded: Number(r.recorded),
    stored: Number(r.stored),
  }));
}
