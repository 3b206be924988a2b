// Report periods: the calendar month, ISO week or day before an instant (UTC), and the directory
// name a report of a period gets by default.
import type { ReportKind } from "../config/index.js";

export type ReportRange = "previous-month" | "previous-week" | "previous-day";

export function previousPeriod(
  range: ReportRange,
  nowMs: number,
): { fromMs: number; toMs: number } {
  const d = new Date(nowMs);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (range === "previous-day") return { fromMs: day - 86_400_000, toMs: day };
  if (range === "previous-week") {
    const monday = day - ((d.getUTCDay() + 6) % 7) * 86_400_000;
    return { fromMs: monday - 7 * 86_400_000, toMs: monday };
  }
  const toMs = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return {
    fromMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1),
    toMs,
  };
}

/** `access-review-2026-10-01-to-2026-11-01` (times of day kept when not midnight). */
export function reportDirName(
  kind: ReportKind,
  fromMs: number,
  toMs: number,
): string {
  const t = (ms: number) => {
    const iso = new Date(ms).toISOString();
    return iso.endsWith("T00:00:00.000Z")
      ? iso.slice(0, 10)
      : iso.slice(0, 19).replaceAll(":", "");
  };
  return `${kind}-${t(fromMs)}-to-${t(toMs)}`;
}
