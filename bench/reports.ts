// `BENCH_ONLY=reports npm run bench`: every report kind over a week of the simulator's ordinary
// data (its default organisation and rates, the "ordinary day" of the alerts part), synced into
// an embedded warehouse (bench/reports-load.ts), each report run through the built CLI as a user
// runs it (every format), in a process of its own under /usr/bin/time: one warm-up, then RUNS
// runs, the median; and RUNS runs without the PDF. BENCH_REPORTS_DIR=<dir> loads the week there once and measures it again on
// later runs (kept; removed by hand).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { REPORT_KINDS } from "../src/config/index.js";
import {
  API_KEY,
  benchDir,
  cli,
  dataDir,
  DAY,
  END_MS,
  fmt,
  median,
  RUNS,
  scenario,
  startSimulator,
  stop,
  verdict,
  type Timed,
} from "./harness.js";
import type { ReportsLoad } from "./reports-load.js";

/** Days of the period every report is built over. */
const REPORT_DAYS = 7;
/** Every format but the PDF. */
const NO_PDF = ["html", "csv", "json"];
/** The target: every kind over the week under this. */
const TARGET_SECONDS = 5;

interface KindTimes {
  kind: string;
  runs: Timed[];
  /** The same runs with every format but the PDF (Chromium's part is the difference). */
  noPdf: Timed[];
  /** Reads of `sessions` by the report's queries (its manifest), sessionReads. */
  sessionReads: number;
  queries: number;
}

/** A reference to `sessions`, or to the view over it, in a query's SQL. */
const SESSIONS_REF = /\.`?sessions(?:_enriched)?`?(?![A-Za-z0-9_])/g;

/**
 * The reads of `sessions` a query makes: the distinct subqueries (the innermost parentheses
 * around a reference, or the whole query) that name it; the engine reads a subquery named twice
 * in one query once.
 */
export function sessionReads(sql: string): number {
  const reads = new Set<string>();
  for (const m of sql.matchAll(SESSIONS_REF)) {
    let open = m.index;
    for (let depth = 0; open >= 0; open--) {
      const c = sql[open];
      if (c === ")") depth++;
      else if (c === "(" && depth-- === 0) break;
    }
    let close = m.index;
    for (let depth = 0; close < sql.length; close++) {
      const c = sql[close];
      if (c === "(") depth++;
      else if (c === ")" && depth-- === 0) break;
    }
    reads.add(sql.slice(Math.max(0, open), close + 1));
  }
  return reads.size;
}

/** The queries a report's manifest lists, and the reads of `sessions` they make. */
function queryCounts(dir: string): { queries: number; sessionReads: number } {
  const manifest = JSON.parse(
    readFileSync(join(dir, "manifest.json"), "utf8"),
  ) as { queries?: { sql: string }[] };
  const queries = manifest.queries ?? [];
  return {
    queries: queries.length,
    sessionReads: queries.reduce((n, q) => n + sessionReads(q.sql), 0),
  };
}

async function loadWeek(dir: string): Promise<ReportsLoad | undefined> {
  if (process.env.BENCH_REPORTS_DIR && existsSync(join(dir, "store")))
    return undefined;
  process.stderr.write(`bench: a week of ordinary data for the reports…\n`);
  const sim = await startSimulator([
    "--history-days",
    String(REPORT_DAYS + 30),
  ]);
  return scenario<ReportsLoad>({
    kind: "reports-load",
    url: sim.url,
    apiKey: API_KEY,
    dataDir: dir,
    fromMs: END_MS - REPORT_DAYS * DAY,
    toMs: END_MS,
  }).finally(() => stop(sim));
}

/** One report through the CLI; the counts of its manifest when it was written. */
async function reportOnce(
  kind: string,
  env: Record<string, string>,
  formats: string[],
): Promise<{ t: Timed; counts?: { queries: number; sessionReads: number } }> {
  const from = new Date(END_MS - REPORT_DAYS * DAY).toISOString().slice(0, 10);
  const to = new Date(END_MS).toISOString().slice(0, 10);
  const out = mkdtempSync(join(benchDir(), "report-"));
  rmSync(out, { recursive: true });
  const t = await cli(
    [
      "report",
      kind,
      "--from",
      from,
      "--to",
      to,
      "--out",
      out,
      ...(formats.length > 0 ? ["--format", formats.join(",")] : []),
    ],
    env,
  );
  const counts = t.ok ? queryCounts(out) : undefined;
  rmSync(out, { recursive: true, force: true });
  return { t, ...(counts ? { counts } : {}) };
}

/** One warm-up, then RUNS runs as a user runs it (every format), and RUNS without the PDF. */
async function timeKind(
  kind: string,
  env: Record<string, string>,
): Promise<KindTimes> {
  const runs: Timed[] = [];
  const noPdf: Timed[] = [];
  let counts = { queries: 0, sessionReads: 0 };
  for (let i = 0; i <= RUNS; i++) {
    process.stderr.write(
      `bench: report ${kind}, ${i === 0 ? "warm-up" : `run ${i}/${RUNS}`}…\n`,
    );
    const all = await reportOnce(kind, env, []);
    counts = all.counts ?? counts;
    if (i === 0) continue;
    runs.push(all.t);
    noPdf.push((await reportOnce(kind, env, NO_PDF)).t);
  }
  return { kind, runs, noPdf, ...counts };
}

export async function benchReports(
  say: (s: string) => void,
  targets: string[],
): Promise<void> {
  const dir = process.env.BENCH_REPORTS_DIR ?? dataDir("reports");
  const load = await loadWeek(dir);
  const env = {
    SESSIONHOUSE_DATA_DIR: dir,
    CLICKHOUSE_DATABASE: "bench",
    SESSIONHOUSE_LOG_LEVEL: "warn",
  };
  const kinds: KindTimes[] = [];
  for (const kind of REPORT_KINDS) kinds.push(await timeKind(kind, env));
  say(`## Reports: every kind over a week of ordinary data`);
  say("");
  say(
    load
      ? `${fmt(load.sessions)} sessions, ${fmt(load.suspensions)} policy suspensions, ${fmt(load.aggregationRows)} aggregation rows of the simulator's default organisation over ${REPORT_DAYS} days, synced with every entity stream and default aggregation job in ${fmt(load.ms / 1000, 1)} s.`
      : `The week loaded before in ${dir} (BENCH_REPORTS_DIR).`,
  );
  say(
    `Each report through the CLI as a user runs it (every format: HTML, PDF, CSV, JSON, manifest), in a process of its own under nice -n 10: one warm-up, then ${RUNS} runs, each followed by a run with every format but the PDF (Chromium printing report.html is the difference). Reads of sessions: the distinct subqueries naming sessions or sessions_enriched in the queries of the report's manifest.`,
  );
  say("");
  say(
    "| kind | runs s | median s | median CPU s | peak RSS MiB | median s without the PDF | queries | reads of sessions |",
  );
  say("|---|---|---|---|---|---|---|---|");
  const medians = kinds.map((k) => ({
    kind: k.kind,
    ok: k.runs.every((r) => r.ok),
    s: median(k.runs.map((r) => r.seconds)),
  }));
  kinds.forEach((k, i) =>
    say(
      `| ${k.kind} | ${k.runs.map((r) => (r.ok ? fmt(r.seconds, 1) : `FAILED: ${r.error}`)).join(", ")} | ${fmt(medians[i]?.s ?? NaN, 1)} | ${fmt(median(k.runs.map((r) => r.cpuSeconds)), 1)} | ${fmt(Math.max(...k.runs.map((r) => r.rssMiB)))} | ${fmt(median(k.noPdf.map((r) => r.seconds)), 1)} | ${k.queries} | ${k.sessionReads} |`,
    ),
  );
  say("");
  const slowest = medians.reduce((a, b) => (b.s > a.s ? b : a));
  targets.push(
    `every report kind over a week of ordinary data < ${TARGET_SECONDS} s: ${slowest.kind} ${fmt(slowest.s, 1)} s — ${verdict(medians.every((m) => m.ok) && slowest.s < TARGET_SECONDS)}`,
  );
}
