// What every stage of the archive shares: a month's name and range, the months archived under a
// root (directories holding a manifest), and the fields of a month's manifest with the shape
// they must have when read from disk.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { MANIFEST_FILE } from "../../evidence/manifest.js";
import { UsageError } from "../../util/errors.js";
import {
  ARCHIVE_FORMAT,
  type ColumnType,
  type MonthRange,
} from "../../warehouse/index.js";

export const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

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
export const manifestFieldsSchema = z.object({
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

export const iso = (ms: number | null) =>
  ms === null ? null : new Date(ms).toISOString();

/** The months after `after` and before `before`, in order ("2026-08", "2026-11": 09 and 10). */
export function monthsBetween(after: string, before: string): string[] {
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
