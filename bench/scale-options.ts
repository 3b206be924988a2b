// What the scale part is asked to do, from the environment: read by the part that runs in the
// bench's process (scale-part.ts) and by the load in a process of its own (scale.ts).

/**
 * BENCH_SCALE_PARTS: what the scale part measures, as a comma list of `sample` (the sample
 * day's check), `dashboards` (every panel), `archive` and `reports` (timed through the CLI);
 * default all four. The load and the disk it takes are always there (unless BENCH_SCALE_DIR).
 */
export const SCALE_PARTS: ReadonlySet<string> = new Set(
  (process.env.BENCH_SCALE_PARTS ?? "sample,dashboards,archive,reports")
    .split(",")
    .map((s) => s.trim()),
);

/**
 * BENCH_SCALE_MONTH=YYYY-MM: only the sessions of that month of the year are loaded (exactly
 * the rows the whole year has in it), the aggregations and the directory as for the year.
 */
export const SCALE_LOAD_MONTH = process.env.BENCH_SCALE_MONTH;

/** The first day of a month `YYYY-MM` and of the month after it, as `YYYY-MM-DD`. */
export function monthBounds(month: string): { from: string; to: string } {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  const start = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, 1) : NaN;
  if (!m || Number.isNaN(start) || Number(m[2]) < 1 || Number(m[2]) > 12)
    throw new Error(`BENCH_SCALE_MONTH=${month}: give a month as YYYY-MM`);
  const end = new Date(start);
  end.setUTCMonth(end.getUTCMonth() + 1);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: day(start), to: day(end.getTime()) };
}
