// `BENCH_ONLY=scale BENCH_SCALE=100m npm run bench`: the scale scenario (bench/scale.ts) in a
// process of its own, then `archive export`, `archive verify`, `archive restore` of one month
// and every report kind over a month and over the year, each through the built CLI in a process
// of its own under /usr/bin/time (wall time and peak RSS). BENCH_SCALE_PARTS chooses the parts
// (see scaleParts); BENCH_SCALE_MONTH=2026-10 loads only that month of the year, BENCH_SCALE_DAYS=30
// only its last 30 days (see loadWindow); BENCH_SCALE_KEEP=1
// keeps the loaded data directory (its path printed) and BENCH_SCALE_DIR=<that path> measures it
// again without loading. Removes every directory it made unless told to keep it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPORT_KINDS } from "../src/config/index.js";
import {
  benchDir,
  cli,
  fmt,
  scenario,
  verdict,
  type Timed,
} from "./harness.js";
import {
  ENTERPRISE,
  MONTH_PARTS_SKIPPED,
  QUERY_CAP_SECONDS,
  rangeAsked,
  rangeLoaded,
  SCALE_RANGES,
  SCALE_SHAPE,
  SCALE_WINDOW,
  type ScaleBench,
  type ScaleLatency,
} from "./scale.js";
import { shown } from "./sample-day.js";
import { monthBounds, scalePartAsked, SHAPE_LABELS } from "./scale-options.js";
import {
  PROJECTED_SESSIONS,
  PROJECTION_METHOD,
  projectTables,
} from "./scale-projection.js";

const line = (t: Timed) =>
  `${fmt(t.seconds, 1)} s (CPU ${fmt(t.cpuSeconds, 1)} s), peak RSS ${fmt(t.rssMiB)} MiB${t.ok ? "" : ` — FAILED: ${t.error}`}`;

async function archives(
  say: (s: string) => void,
  targets: string[],
  env: Record<string, string>,
  r: ScaleBench,
): Promise<void> {
  const root = mkdtempSync(join(benchDir(), "scale-archive-"));
  const restoreDir = mkdtempSync(join(benchDir(), "scale-restore-"));
  const exported = await cli(
    ["archive", "export", "--month", r.month, "--to", root],
    env,
  );
  const verified = await cli(["archive", "verify", root], env);
  const restored = await cli(
    [
      "archive",
      "restore",
      "--month",
      r.month,
      "--from",
      root,
      "--allow-unsigned",
    ],
    { ...env, SESSIONHOUSE_DATA_DIR: restoreDir },
  );
  rmSync(root, { recursive: true, force: true });
  rmSync(restoreDir, { recursive: true, force: true });
  // The export's own time as it prints it (`… rows in 12.3 s`): the process's start and the
  // engine's opening of the data directory are not part of the write.
  const exportSeconds = Number(
    / rows in ([\d.]+) s /.exec(exported.stdout)?.[1] ?? exported.seconds,
  );
  const ratio = r.directMs / 1000 / exportSeconds;
  say(`### Archive of ${r.month} (${fmt(r.monthSessions)} sessions)`);
  say("");
  say("| command | time and peak RSS |");
  say("|---|---|");
  say(
    `| archive export | ${line(exported)}; the export itself ${fmt(exportSeconds, 1)} s |`,
  );
  say(
    `| the engine writing the month's archive files as Parquet itself | ${fmt(r.directMs / 1000, 1)} s |`,
  );
  say(`| archive verify (reads the Parquet back) | ${line(verified)} |`);
  say(`| archive restore (into an empty data directory) | ${line(restored)} |`);
  say("");
  const under = (t: Timed) => t.ok && t.rssMiB < 1024;
  targets.push(
    `scale: archive export ≥ 0.8 × the engine's own Parquet write: ${fmt(ratio, 2)} — ${verdict(exported.ok && ratio >= 0.8)}`,
    `scale: archive export, verify, restore each peak RSS < 1 GiB: ${verdict(under(exported) && under(verified) && under(restored))}`,
  );
}

async function reports(
  say: (s: string) => void,
  targets: string[],
  env: Record<string, string>,
  r: ScaleBench,
): Promise<void> {
  // With one month loaded the year's reports read the same sessions as the month's.
  const year = SCALE_WINDOW === undefined;
  say("### Reports (every format: HTML, PDF, CSV, JSON, manifest)");
  say("");
  if (!year)
    say(
      `Only ${r.month} is loaded: a report over the year reads the same sessions as over the month, so the year is not run.`,
    );
  say("");
  say(year ? `| kind | ${r.month} | the year |` : `| kind | ${r.month} |`);
  say(year ? "|---|---|---|" : "|---|---|");
  let monthOk = true;
  let yearOk = true;
  const { from, to } = monthBounds(r.month);
  for (const kind of REPORT_KINDS) {
    const run = async (from: string, to: string) => {
      const out = mkdtempSync(join(benchDir(), "scale-report-"));
      rmSync(out, { recursive: true });
      const t = await cli(
        ["report", kind, "--from", from, "--to", to, "--out", out],
        env,
      );
      rmSync(out, { recursive: true, force: true });
      return t;
    };
    const month = await run(from, to);
    monthOk &&= month.ok && month.seconds < 60 && month.rssMiB < 2048;
    if (!year) {
      say(`| ${kind} | ${line(month)} |`);
      continue;
    }
    const whole = await run("2025-11-16", "2026-11-16");
    yearOk &&= whole.ok && whole.seconds < 300 && whole.rssMiB < 2048;
    say(`| ${kind} | ${line(month)} | ${line(whole)} |`);
  }
  say("");
  targets.push(
    `scale: every report over a month < 60 s and < 2 GiB peak RSS: ${verdict(monthOk)}`,
  );
  if (year)
    targets.push(
      `scale: every report over the year < 5 min and < 2 GiB peak RSS: ${verdict(yearOk)}`,
    );
}

function latencies(
  say: (s: string) => void,
  targets: string[],
  r: ScaleBench,
  sessions: number,
): void {
  say(
    "Every variable and panel as the Grafana plugin sends it, one warm-up then the runs (BENCH_SCALE_RUNS, default 5); ms:",
  );
  say("");
  say("| dashboard | query | range | filters | p50 | p95 | rows |");
  say("|---|---|---|---|---|---|---|");
  for (const l of r.latencies)
    say(
      `| ${l.dashboard} | ${l.query} | ${l.range} | ${l.filter} | ${ms(l, "p50")} | ${ms(l, "p95")} | ${l.stopped ? "" : l.rows} |`,
    );
  say("");
  for (const [range, days] of SCALE_RANGES) {
    const limit = range === "365 d" ? 1000 : 300;
    if (!rangeLoaded(days)) {
      say(
        `${range}: NOT measured: ${SCALE_WINDOW?.label ?? ""}, so a range over ${range} would read only the loaded sessions, not the year's.`,
      );
      continue;
    }
    if (!rangeAsked(range)) {
      say(`${range}: not measured: BENCH_SCALE_RANGES leaves it out.`);
      continue;
    }
    const of = r.latencies.filter((l) => l.range === range);
    const slow = of.filter((l) => l.stopped !== undefined || l.p50 >= limit);
    say(
      `${range}: slowest p50 ${slowest(of)} ms; at or over ${limit} ms: ${slow.length} of ${of.length}${slow.length > 0 ? ` (${slow.map((l) => `${l.query} [${l.filter}] ${ms(l, "p50")}`).join("; ")})` : ""}.`,
    );
    targets.push(
      `scale: every query over ${range} p50 < ${limit} ms: ${verdict(slow.length === 0)}`,
    );
  }
  slowestPanel(say, targets, r.latencies, sessions);
  say("");
}

/** At 100,000,000 sessions a year; a smaller load's limit is scaled down with its sessions. */
const ADVERSARIAL_PANEL_LIMIT_MS = 5000;

/**
 * The slowest variable or panel measured, over every range and filter, named with its time; on
 * the adversarial (uniform) year also judged against ADVERSARIAL_PANEL_LIMIT_MS scaled to the
 * sessions loaded (a panel's time grows with the sessions it reads).
 */
function slowestPanel(
  say: (s: string) => void,
  targets: string[],
  of: readonly ScaleLatency[],
  sessions: number,
): void {
  if (of.length === 0) return;
  const worst = of.reduce((a, b) => (slowerThan(b, a) ? b : a));
  const shape = SCALE_SHAPE;
  const limit = (ADVERSARIAL_PANEL_LIMIT_MS * sessions) / 100_000_000;
  say(
    `Slowest of the ${shape} year: ${worst.dashboard} / ${worst.query} over ${worst.range} [${worst.filter}], p50 ${ms(worst, "p50")} ms.`,
  );
  if (shape === "uniform")
    targets.push(
      `scale: no panel over ${fmt(limit)} ms on the adversarial year (5 s at 100,000,000 sessions; slowest ${worst.query} over ${worst.range} [${worst.filter}], ${ms(worst, "p50")} ms): ${verdict(worst.stopped === undefined && worst.p50 <= limit)}`,
    );
}

/** Whether `a` is slower than `b`: a query that did not finish is slower than any that did. */
const slowerThan = (a: ScaleLatency, b: ScaleLatency): boolean =>
  a.stopped !== undefined
    ? b.stopped === undefined
    : b.stopped === undefined && a.p50 > b.p50;

/** The slowest p50 of `of` as printed (a query stopped at the cap is slower than any). */
function slowest(of: readonly ScaleLatency[]): string {
  const capped = of.find((l) => l.stopped === "cap");
  if (capped) return ms(capped, "p50");
  return fmt(Math.max(...of.filter((l) => !l.stopped).map((l) => l.p50)));
}

/** A query's p50 or p95 as printed: over the cap, or failed, when it did not finish. */
const ms = (l: ScaleLatency, p: "p50" | "p95"): string =>
  l.stopped === "cap"
    ? `over ${fmt(QUERY_CAP_SECONDS * 1000)}`
    : l.stopped === "error"
      ? "failed"
      : fmt(l[p]);

export async function benchScale(
  say: (s: string) => void,
  targets: string[],
  sessions: number,
): Promise<void> {
  // BENCH_SCALE_DIR: a data directory an earlier run kept (BENCH_SCALE_KEEP=1), measured again.
  const reuse = process.env.BENCH_SCALE_DIR;
  const keep = reuse !== undefined || process.env.BENCH_SCALE_KEEP === "1";
  // In the run's directory, removed with it (also when the run is interrupted); a kept one
  // outside it, as it outlives the run.
  const dir =
    reuse ??
    (keep
      ? mkdtempSync(join(tmpdir(), "sessionhouse-bench-scale-data-"))
      : mkdtempSync(join(benchDir(), "scale-data-")));
  process.stderr.write(
    `bench: scale, ${fmt(sessions)} sessions a year, ${SCALE_SHAPE} shape${SCALE_WINDOW ? `, ${SCALE_WINDOW.label}` : ""} (${reuse ? "reusing" : "loading into"} ${dir})…\n`,
  );
  try {
    const r = await scenario<ScaleBench>({
      kind: "scale",
      dataDir: dir,
      sessions,
      reuse: reuse !== undefined,
    });
    say(
      `## A year at ${fmt(sessions)} sessions${SCALE_WINDOW ? ` (${SCALE_WINDOW.label})` : ""}`,
    );
    say("");
    say(`The scenario is ${SHAPE_LABELS[SCALE_SHAPE]}.`);
    say("");
    if (r.sample) sample(say, targets, r.sample);
    // BENCH_SCALE_SAMPLE_ONLY=1: nothing was loaded.
    if (r.tables.length === 0) return;
    disk(say, targets, r, reuse);
    // BENCH_SCALE_LOAD_ONLY=1: nothing was measured on the load.
    if (process.env.BENCH_SCALE_LOAD_ONLY === "1") return;
    if (scalePartAsked("dashboards")) latencies(say, targets, r, sessions);
    const env = {
      SESSIONHOUSE_DATA_DIR: dir,
      CLICKHOUSE_DATABASE: "bench",
      SESSIONHOUSE_LOG_LEVEL: "warn",
    };
    const monthParts = (["archive", "reports"] as const).filter((p) =>
      scalePartAsked(p),
    );
    if (MONTH_PARTS_SKIPPED !== undefined && monthParts.length > 0) {
      say(`${monthParts.join(" and ")}: NOT run: ${MONTH_PARTS_SKIPPED}.`);
      say("");
      return;
    }
    if (scalePartAsked("archive")) await archives(say, targets, env, r);
    if (scalePartAsked("reports")) await reports(say, targets, env, r);
  } finally {
    if (keep)
      process.stderr.write(
        `bench: scale, data directory kept: ${dir} (BENCH_SCALE_DIR=${dir} measures it again; remove it when done)\n`,
      );
    else rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The rollups' rows a session (how much a rollup saves a panel over the sessions), and the
 * load time held to LOAD_TARGET_MINUTES at 10 million sessions a year.
 */
function rollupRows(
  say: (s: string) => void,
  targets: string[],
  r: ScaleBench,
  onDisk: number,
  reuse: string | undefined,
): void {
  const rows = (table: string) =>
    (r.tables.find((t) => t.table === table)?.rows ?? 0) / Math.max(1, onDisk);
  say(
    `Rollup rows a session (${SCALE_SHAPE} shape): session_rollups_daily ${fmt(rows("session_rollups_daily"), 3)}, group_resource_rollups_daily ${fmt(rows("group_resource_rollups_daily"), 3)}.`,
  );
  say("");
  if (reuse === undefined && SCALE_WINDOW === undefined && r.sessions === 1e7)
    targets.push(
      `scale: 10,000,000 sessions (${SCALE_SHAPE} shape) load in ≤ ${LOAD_TARGET_MINUTES} min: ${fmt(r.loadMs / 60_000, 1)} min — ${verdict(r.loadMs <= LOAD_TARGET_MINUTES * 60_000)}`,
    );
}

/** The longest a year of 10 million sessions may take to load. */
const LOAD_TARGET_MINUTES = 10;

/** The load's time and the disk each table and each column of `sessions` takes. */
function disk(
  say: (s: string) => void,
  targets: string[],
  r: ScaleBench,
  reuse: string | undefined,
): void {
  const total = r.tables.reduce((a, t) => a + t.bytes, 0);
  // Sessions on disk: the year's, or the loaded window's alone.
  const onDisk = SCALE_WINDOW
    ? (r.tables.find((t) => t.table === "sessions")?.rows ?? 0)
    : r.sessions;
  if (reuse === undefined)
    say(
      `Loaded in ${fmt(r.loadMs / 1000, 1)} s, ${fmt(r.loadCpuMs / 1000, 1)} s of CPU (sessions, a year of aggregations, the directory, the product's rollups, every table merged). Disk (system.parts, active parts):`,
    );
  else say(`Reused ${reuse}. Disk (system.parts, active parts):`);
  say("");
  // A year loaded: each table projected to the enterprise year (bench/scale-projection.ts).
  const projected = SCALE_WINDOW
    ? undefined
    : projectTables(r.tables, r.sessions, ENTERPRISE);
  const at = fmt(PROJECTED_SESSIONS);
  say(
    `| table | rows | bytes | bytes a row | bytes a session |${projected ? ` projected at ${at}: rows | bytes a session |` : ""}`,
  );
  say(`|---|---|---|---|---|${projected ? "---|---|" : ""}`);
  r.tables.forEach((t, i) => {
    const p = projected?.[i];
    say(
      `| ${t.table} | ${fmt(t.rows)} | ${fmt(t.bytes)} | ${fmt(t.rows > 0 ? t.bytes / t.rows : 0, 1)} | ${fmt(t.bytes / onDisk, 2)} |${projected ? ` ${fmt(p?.rows ?? 0)} | ${fmt((p?.bytes ?? 0) / PROJECTED_SESSIONS, 2)} |` : ""}`,
    );
  });
  say("");
  const perSession = total / onDisk;
  const perSessionProjected = projected
    ? projected.reduce((a, t) => a + t.bytes, 0) / PROJECTED_SESSIONS
    : undefined;
  say(
    `All tables: ${fmt(total / 2 ** 30, 2)} GiB, ${fmt(perSession, 1)} bytes a session all-in (raw record kept), measured at ${fmt(onDisk)}${perSessionProjected === undefined ? "" : `; projected at ${at}: ${fmt((perSessionProjected * PROJECTED_SESSIONS) / 2 ** 30, 2)} GiB, ${fmt(perSessionProjected, 1)} bytes a session`}.`,
  );
  if (projected) say(`Projection: ${PROJECTION_METHOD}.`);
  rollupRows(say, targets, r, onDisk, reuse);
  // The log aggregations: their tables and their daily rollup, over the year's 365 days.
  const aggBytes = r.tables
    .filter(
      (t) =>
        t.table.startsWith("agg_") || t.table === "data_label_rollups_daily",
    )
    .reduce((a, t) => a + t.bytes, 0);
  say(
    `Log aggregations (agg_* and data_label_rollups_daily): ${fmt(aggBytes / 365 / 1024, 1)} KiB a day of the year.`,
  );
  say("");
  // A window's sessions beside a year's aggregations and directory: no per-session verdict.
  if (perSessionProjected !== undefined)
    targets.push(
      `scale: ≤ 200 bytes a session all-in, measured at ${fmt(onDisk)}: ${fmt(perSession, 1)} — ${verdict(perSession <= 200)}`,
      `scale: ≤ 200 bytes a session all-in, projected at ${at}: ${fmt(perSessionProjected, 1)} — ${verdict(perSessionProjected <= 200)}`,
    );
  say("The sessions table's columns on disk:");
  say("");
  say("| column | bytes a session | compressed ÷ uncompressed |");
  say("|---|---|---|");
  for (const c of r.sessionColumns.filter((c) => c.bytes > 0))
    say(
      `| ${c.column} | ${fmt(c.bytes / onDisk, 1)} | ${fmt(c.uncompressed > 0 ? c.bytes / c.uncompressed : 0, 3)} |`,
    );
  say("");
}

function sample(
  say: (s: string) => void,
  targets: string[],
  s: NonNullable<ScaleBench["sample"]>,
): void {
  const equal = s.differences.length === 0;
  say(
    `sample day ${s.day} (${fmt(s.sessions)} sessions, checked in ${fmt(s.ms / 1000, 1)} s): ${equal ? "tables equal a sync" : `${s.differences.length} differences from a sync:`}`,
  );
  for (const d of s.differences) say(`- ${d}`);
  say("");
  say(
    "The day's distributions against the simulator's day at the same size (the shape measures: the enterprise's organisation at the scenario's mean day):",
  );
  say("");
  say("| measure | generated | simulator | tolerance | |");
  say("|---|---|---|---|---|");
  for (const d of s.distributions)
    say(
      `| ${d.measure} | ${shown(d, d.generated)} | ${shown(d, d.simulator)} | ±${shown(d, d.tolerance)} | ${d.within ? "within" : "NOT within"} |`,
    );
  say("");
  targets.push(
    `scale: the sample day's tables equal a sync of it, distributions the simulator's: ${verdict(equal)}`,
  );
}
