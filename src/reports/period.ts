// Report periods: the calendar month, ISO week or day before an instant (UTC), and the directory
// name a report of a period gets by default; a period not begun is refused.
import type { ReportKind } from "../config/index.js";
import { UsageError } from "../util/errors.js";
import type { Notice } from "./model.js";

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

const plain = (ms: number): string =>
  new Date(ms).toISOString().slice(0, 19).replace("T", " ");

/**
 * A period that has not begun is refused (a report of it would say nobody did anything); page
 * one says when part of a period is still to come.
 */
export function futureNotices(
  o: { fromMs: number; toMs: number },
  nowMs: number,
): Notice[] {
  if (o.fromMs >= nowMs)
    throw new UsageError(
      `the period ${plain(o.fromMs)} to ${plain(o.toMs)} UTC has not begun: it is ${plain(nowMs)} UTC now`,
      {
        hint: "a report of a period in the future would say nobody did anything: give a --from (and --to) in the past, e.g. --from 2026-10-01 --to 2026-11-01",
      },
    );
  if (o.toMs <= nowMs) return [];
  return [
    {
      level: "warning",
      text: `The period ends at ${plain(o.toMs)} UTC, after this report was made (${plain(nowMs)} UTC): the part from then to the period's end had not happened yet, and nothing of it is in this report.`,
    },
  ];
}
