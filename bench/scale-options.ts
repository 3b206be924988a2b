// What the scale part is asked to do, from the environment: read by the part that runs in the
// bench's process (scale-part.ts) and by the load in a process of its own (scale.ts).
import { byNearness } from "../src/util/nearest.js";
import { SHAPES, type Shape } from "./org-scenario.js";

/**
 * A BENCH_* variable the bench cannot use: the run prints its message (which names the
 * variable and what to give) without a stack and exits 2, before anything is loaded.
 */
export class BenchInputError extends Error {
  override name = "BenchInputError";
}

/** What the scale part can measure; `none` measures nothing but the load and its disk. */
const SCALE_PART_NAMES = [
  "sample",
  "dashboards",
  "archive",
  "reports",
  "none",
] as const;

/**
 * BENCH_SCALE_PARTS: what the scale part measures, as a comma list of `sample` (the sample
 * day's check), `dashboards` (every panel), `archive` and `reports` (timed through the CLI);
 * default all four. The load and the disk it takes are always there (unless BENCH_SCALE_DIR).
 * A name not in SCALE_PART_NAMES is refused with the nearest ones.
 */
export function scaleParts(
  env: Readonly<Record<string, string | undefined>>,
): ReadonlySet<string> {
  const asked = (env.BENCH_SCALE_PARTS ?? "sample,dashboards,archive,reports")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const p of asked)
    if (!SCALE_PART_NAMES.some((n) => n === p))
      throw new BenchInputError(
        `BENCH_SCALE_PARTS=${env.BENCH_SCALE_PARTS}: no part named "${p}"; give a comma list of ${byNearness(p, SCALE_PART_NAMES).join(", ")}`,
      );
  return new Set(asked);
}

/** Whether this process measures `part` (BENCH_SCALE_PARTS, checked before the run). */
export function scalePartAsked(
  part: (typeof SCALE_PART_NAMES)[number],
): boolean {
  return scaleParts(process.env).has(part);
}

const DAY = 86_400_000;

/**
 * BENCH_SCALE_RANGES: which of the dashboards' ranges are measured, as a comma list of `24h`,
 * `30d` and `365d` (default all three); a range the load window does not hold is never measured.
 */
export function rangesAsked(
  env: Readonly<Record<string, string | undefined>>,
): ReadonlySet<string> {
  const all = ["24h", "30d", "365d"];
  const asked = (env.BENCH_SCALE_RANGES ?? all.join(","))
    .split(",")
    .map((r) => r.replaceAll(" ", "").trim())
    .filter((r) => r !== "");
  for (const r of asked)
    if (!all.includes(r))
      throw new BenchInputError(
        `BENCH_SCALE_RANGES=${env.BENCH_SCALE_RANGES}: "${r}" is not a range; give a comma list of 24h, 30d and 365d`,
      );
  return new Set(asked);
}

/** The first day of a month `YYYY-MM` and of the month after it, as `YYYY-MM-DD`. */
export function monthBounds(month: string): { from: string; to: string } {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  const start = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, 1) : NaN;
  if (!m || Number.isNaN(start) || Number(m[2]) < 1 || Number(m[2]) > 12)
    throw new BenchInputError(
      `BENCH_SCALE_MONTH=${month}: give a month as YYYY-MM`,
    );
  const end = new Date(start);
  end.setUTCMonth(end.getUTCMonth() + 1);
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: day(start), to: day(end.getTime()) };
}

/**
 * The sessions loaded when not the whole year: their start times [fromMs, toMs), exactly the
 * rows the whole year has in that range (each session is a function of its number); the
 * aggregations and the directory are loaded as for the year.
 */
export interface LoadWindow {
  fromMs: number;
  toMs: number;
  /** What the printed results call it: "only 2026-10 loaded", "only the last 30 days loaded". */
  label: string;
  /** BENCH_SCALE_MONTH: the month the archive and the reports are of; absent for BENCH_SCALE_DAYS. */
  month?: string;
  /** BENCH_SCALE_DAYS: how many days before the year's end. */
  days?: number;
}

/**
 * The loaded window from the environment, for a year ending at `endMs`: BENCH_SCALE_MONTH=YYYY-MM
 * (that month), or BENCH_SCALE_DAYS=N (the last N whole days, 1 to 365, before `endMs`);
 * undefined when the whole year is loaded. Both at once is an error.
 */
export function loadWindow(
  env: Record<string, string | undefined>,
  endMs: number,
): LoadWindow | undefined {
  const month = env.BENCH_SCALE_MONTH;
  const days = env.BENCH_SCALE_DAYS;
  if (month !== undefined && days !== undefined)
    throw new BenchInputError(
      "BENCH_SCALE_MONTH and BENCH_SCALE_DAYS are both set: give one of them (a month, or the last N days of the year)",
    );
  if (month !== undefined) {
    const { from, to } = monthBounds(month);
    return {
      fromMs: Date.parse(from),
      toMs: Date.parse(to),
      label: `only ${month} loaded`,
      month,
    };
  }
  if (days === undefined) return undefined;
  const n = /^\d+$/.test(days.trim()) ? Number(days) : NaN;
  if (!(n >= 1 && n <= 365))
    throw new BenchInputError(
      `BENCH_SCALE_DAYS=${days}: give a whole number of days from 1 to 365 (the last days of the year loaded)`,
    );
  return {
    fromMs: endMs - n * DAY,
    toMs: endMs,
    label: `only the last ${n} days loaded`,
    days: n,
  };
}

/** Whether the last `days` days before `endMs` are all loaded (always, for the whole year). */
export function windowCovers(
  window: LoadWindow | undefined,
  endMs: number,
  days: number,
): boolean {
  return (
    window === undefined ||
    (window.fromMs <= endMs - days * DAY && window.toMs >= endMs)
  );
}

/**
 * BENCH_SCALE_SHAPE: the scenario's shape, `org` (default: the simulator's organisation) or
 * `uniform` (accounts reach resources at random, the adversarial case for the rollups).
 */
export function scaleShape(env: Record<string, string | undefined>): Shape {
  const shape = (env.BENCH_SCALE_SHAPE ?? "org").trim();
  const known = SHAPES.find((s) => s === shape);
  if (known === undefined)
    throw new BenchInputError(
      `BENCH_SCALE_SHAPE=${env.BENCH_SCALE_SHAPE}: no shape named "${shape}"; give one of ${byNearness(shape, SHAPES).join(", ")}`,
    );
  return known;
}

/** How the printed results name a shape. */
export const SHAPE_LABELS: Readonly<Record<Shape, string>> = {
  org: "shaped like an organisation (BENCH_SCALE_SHAPE=org)",
  uniform: "uniform at random (BENCH_SCALE_SHAPE=uniform)",
};

/** "1m", "10m", "100m", "30m", or a plain number of sessions. */
export function scaleSessions(spec: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(spec.trim());
  if (!m?.[1])
    throw new BenchInputError(
      `BENCH_SCALE=${spec}: give a number of sessions such as 1m, 10m or 100m`,
    );
  const unit = m[2]?.toLowerCase();
  return Math.round(
    Number(m[1]) * (unit === "m" ? 1e6 : unit === "k" ? 1e3 : 1),
  );
}
