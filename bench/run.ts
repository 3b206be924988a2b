// `npm run bench`: throughput, memory and linearity of the sessions sync against the engine's
// own ingest (bench/sessions.ts), backfill behind a remote service's pace, the aggregation
// backfill rate, dashboard latency at 10M sessions, and retention.
// Each scenario runs in its own process (its peak RSS is its own); the simulator runs in another
// one in benchmark mode (pre-built pages), so it is not the bottleneck. Prints a table and
// writes bench/RESULTS.md.
// First: it checks every BENCH_* variable before the parts' modules read theirs.
import { benchOnly, partRuns, type BenchPart } from "./bench-input.js";
import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { planWindows } from "../src/sources/windows.js";
import {
  API_KEY,
  cpuSeconds,
  dataDir,
  DAY,
  END_MS,
  fmt,
  median,
  ROOT,
  removeRunDir,
  RUNS,
  scenario,
  startSimulator,
  stop,
  verdict,
  type SessionsResult,
} from "./harness.js";
import type { RetentionBench } from "./retention.js";
import type { ScenarioArgs } from "./scenario.js";
import { benchScale } from "./scale-part.js";
import { scaleSessions } from "./scale-options.js";
import { benchSessions } from "./sessions.js";
import type { AlertBench } from "./alerts.js";
import {
  ALERT_BUDGET_PER_DAY_PER_1000,
  alertRate,
} from "../src/detections/alerts.js";
import { benchTimeToDetect } from "./time-to-detect.js";
import { benchReports } from "./reports.js";

const MILLION = Number(process.env.BENCH_SESSIONS ?? 1_000_000);
const DASHBOARD_SESSIONS = Number(
  process.env.BENCH_DASHBOARD_SESSIONS ?? 10_000_000,
);
/** BENCH_SCALE=1m, 10m or 100m: the sessions of the scale part (bench/scale.ts). */
const SCALE = process.env.BENCH_SCALE;
/**
 * BENCH_ONLY=sessions (or latency, aggregations, dashboards, retention, detections, alerts, ttd, reports, scale, comma-separated)
 * runs only those parts. The full run has the scale part when BENCH_SCALE is set, and never the
 * reports part (BENCH_ONLY=reports).
 */
const runs = (part: BenchPart) => partRuns(part, process.env);
/** Sessions of the day the detections run over. */
const DETECTION_SESSIONS = Number(
  process.env.BENCH_DETECTION_SESSIONS ?? 275_000,
);

async function main(): Promise<void> {
  const lines: string[] = [];
  const say = (s: string) => {
    lines.push(s);
    process.stdout.write(`${s}\n`);
  };
  say(`# sessionhouse benchmark`);
  say("");
  say(
    `Machine: ${cpus().length} cores, ${fmt(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version}; embedded ClickHouse (chdb). ${new Date().toISOString()}`,
  );
  say("");

  const targets: string[] = [];
  if (runs("sessions")) await benchSessions(say, targets, MILLION);
  if (runs("latency")) {
    // A backfill against a remote service: every answer starts after 400 ms and flows at
    // 20 MB/s, four answers at once. Windows one after the other, then side by side.
    const L = { firstByteMs: 400, bytesPerSecond: 20e6, connections: 4 };
    const sim = await startSimulator([
      "--sessions-per-day",
      "2000",
      "--history-days",
      "40",
      "--seed",
      "11",
      "--latency",
      `${L.firstByteMs}ms,${L.bytesPerSecond / 1e6}MB/s,${L.connections}`,
    ]);
    const from = END_MS - 30 * DAY;
    const windowMs = DAY / 2;
    const windows = planWindows(from, END_MS, windowMs).length;
    const backfill = (concurrency: number) =>
      scenario<SessionsResult>({
        kind: "sessions",
        url: sim.url,
        apiKey: API_KEY,
        dataDir: dataDir(`latency-${concurrency}`),
        pageSize: 100_000,
        fromMs: from,
        toMs: END_MS,
        windowMs,
        windowConcurrency: concurrency,
      });
    // One page a window here: what the service's pace allows with four answers at once.
    const boundOf = (r: SessionsResult) =>
      (windows * L.firstByteMs + (r.bytes / L.bytesPerSecond) * 1000) /
      L.connections;
    const results: { sequential: SessionsResult; parallel: SessionsResult }[] =
      [];
    for (let i = 0; i < RUNS; i++) {
      process.stderr.write(
        `bench: 30-day backfill behind 400 ms, 20 MB/s, run ${i + 1}/${RUNS}…\n`,
      );
      const sequential = await backfill(1);
      // Twice as many windows as connections: while a window's rows are stored, another waits
      // on the service, so its four answer slots stay busy.
      const parallel = await backfill(2 * L.connections);
      results.push({ sequential, parallel });
    }
    await stop(sim);
    const speedups = results.map((r) => r.parallel.ms / r.sequential.ms);
    const ofBounds = results.map((r) => r.parallel.ms / boundOf(r.parallel));
    const speedup = median(speedups);
    const ofBound = median(ofBounds);
    say("## Backfill behind a remote service's pace");
    say("");
    say(
      `30 days, ${fmt(results[0]?.parallel.rows ?? 0)} sessions, ${windows} windows of 12 h, 400 ms to first byte, 20 MB/s an answer, 4 at once; ${RUNS} runs, the targets judged on the medians.`,
    );
    say("");
    say(
      "| run | one window at a time | eight at once over 4 connections | ÷ one at a time | the bound the service's pace allows | ÷ the bound |",
    );
    say("|---|---|---|---|---|---|");
    results.forEach((r, i) =>
      say(
        `| ${i + 1} | ${fmt(r.sequential.ms / 1000, 1)} s | ${fmt(r.parallel.ms / 1000, 1)} s | ${fmt(speedups[i] ?? 0, 2)} | ${fmt(boundOf(r.parallel) / 1000, 1)} s | ${fmt(ofBounds[i] ?? 0, 2)} |`,
      ),
    );
    say(`| median | | | ${fmt(speedup, 2)} | | ${fmt(ofBound, 2)} |`);
    say("");
    targets.push(
      `windows side by side ≤ 0.33 × one at a time: median ${fmt(speedup, 2)} — ${verdict(speedup <= 0.33)}`,
      `windows side by side ≤ 1.2 × the bound: median ${fmt(ofBound, 2)} — ${verdict(ofBound <= 1.2)}`,
    );
  }

  if (runs("aggregations")) {
    // 2. Aggregations: 30-day backfill at 5m, three group-by levels.
    process.stderr.write("bench: 30-day aggregation backfill…\n");
    const aggSim = await startSimulator([
      "--history-days",
      "40",
      "--bench",
      "--bench-cache-mb",
      "2048",
      "--seed",
      "7",
    ]);
    type AggResult = {
      rows: number;
      windows: number;
      ms: number;
      rssMB: number;
    };
    const aggArgs: ScenarioArgs = {
      kind: "aggregations",
      url: aggSim.url,
      apiKey: API_KEY,
      dataDir: dataDir("agg"),
      fromMs: END_MS - 30 * DAY,
      toMs: END_MS,
    };
    // A first, unmeasured run makes the simulator build every answer the measured run asks
    // for (computing histograms costs it more CPU than the exporter spends storing them).
    process.stderr.write("bench: pre-building the simulator's aggregations…\n");
    await scenario<AggResult>(aggArgs);
    const aggSimCpuBefore = cpuSeconds(aggSim.child);
    const agg = await scenario<AggResult>(aggArgs);
    const aggSimCpu = cpuSeconds(aggSim.child) - aggSimCpuBefore;
    await stop(aggSim);
    say("## Aggregation backfill");
    say("");
    say("| measurement | value |");
    say("|---|---|");
    say(
      `| 30 days at 5m, group by resource.technology › user.email › resource.name (${agg.windows} windows) | ${fmt(agg.ms / 1000, 1)} s, ${fmt(agg.rows)} rows, ${fmt(agg.rows / (agg.ms / 1000))} rows/s, peak RSS ${fmt(agg.rssMB)} MB (the simulator used ${fmt(aggSimCpu, 1)} s of CPU meanwhile) |`,
    );
    say("");
  }
  if (runs("dashboards")) {
    // 3. Dashboards at 10M sessions and a year of aggregations, 30-day range.
    process.stderr.write(
      `bench: dashboards over ${fmt(DASHBOARD_SESSIONS)} sessions (generating)…\n`,
    );
    const dash = await scenario<{
      sessions: number;
      generateMs: number;
      variables: {
        dashboard: string;
        variable: string;
        p50: number;
        p95: number;
        rows: number;
      }[];
      panels: {
        dashboard: string;
        panel: string;
        p50: number;
        p95: number;
        rows: number;
      }[];
    }>({
      kind: "dashboards",
      dataDir: dataDir("dashboards"),
      sessions: DASHBOARD_SESSIONS,
    });
    const slow = dash.panels.filter((p) => p.p50 >= 300);
    const slowVariables = dash.variables.filter((v) => v.p50 >= 300);
    say(
      `## Dashboard queries: ${fmt(dash.sessions)} sessions and a year of aggregations, 30-day range`,
    );
    say("");
    say(
      `Generated in ${fmt(dash.generateMs / 1000, 1)} s. Each query: one warm-up, then 7 runs.`,
    );
    say("");
    say(
      "Template variables (each dashboard runs them when it opens, before its panels):",
    );
    say("");
    say("| dashboard | variable | p50 ms | p95 ms | rows |");
    say("|---|---|---|---|---|");
    for (const v of dash.variables)
      say(
        `| ${v.dashboard} | ${v.variable} | ${fmt(v.p50)} | ${fmt(v.p95)} | ${v.rows} |`,
      );
    say("");
    say("Panels:");
    say("");
    say("| dashboard | panel | p50 ms | p95 ms | rows |");
    say("|---|---|---|---|---|");
    for (const p of dash.panels)
      say(
        `| ${p.dashboard} | ${p.panel} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${p.rows} |`,
      );
    say("");
    say(
      `Slowest p50: ${fmt(Math.max(...dash.panels.map((p) => p.p50)))} ms; panels at or over 300 ms p50: ${slow.length} of ${dash.panels.length}.`,
    );
    say("");

    say(
      `Slowest variable p50: ${fmt(Math.max(...dash.variables.map((v) => v.p50)))} ms; variables at or over 300 ms p50: ${slowVariables.length} of ${dash.variables.length}.`,
    );
    say("");

    targets.push(
      `every dashboard panel query p50 < 300 ms: ${verdict(slow.length === 0)}`,
      `every template variable query p50 < 300 ms: ${verdict(slowVariables.length === 0)}`,
    );
  }
  if (runs("detections")) {
    // 5. Every shipped detection rule over one day of sessions that arrived in one window.
    process.stderr.write(
      `bench: detections over ${fmt(DETECTION_SESSIONS)} sessions (generating)…\n`,
    );
    const det = await scenario<{
      sessions: number;
      rules: { rule: string; p50: number; p95: number; hits: number }[];
    }>({
      kind: "detections",
      dataDir: dataDir("detections"),
      sessions: DETECTION_SESSIONS,
    });
    say(
      `## Detections: every shipped rule over one day of ${fmt(det.sessions)} sessions`,
    );
    say("");
    say(
      "Each rule evaluated as the detections job evaluates it, over one window holding the whole day's arrivals (one warm-up, then 5 runs):",
    );
    say("");
    say("| rule | p50 ms | p95 ms | hits |");
    say("|---|---|---|---|");
    for (const r of det.rules)
      say(`| ${r.rule} | ${fmt(r.p50)} | ${fmt(r.p95)} | ${r.hits} |`);
    say("");
    const slow = det.rules.filter((r) => r.p50 >= 1000);
    targets.push(
      `every detection rule over a day of ${fmt(det.sessions)} sessions p50 < 1 s: ${verdict(slow.length === 0)}`,
    );
  }
  if (runs("alerts")) await benchAlerts(say, targets);
  if (runs("ttd")) await benchTimeToDetect(say, targets);
  if (runs("reports")) await benchReports(say, targets);
  if (runs("retention")) {
    // 4. Retention: rollups of 10M sessions read for a year; a month's archive export.
    process.stderr.write(
      `bench: retention over ${fmt(DASHBOARD_SESSIONS)} sessions (generating)…\n`,
    );
    const ret = await scenario<RetentionBench>({
      kind: "retention",
      dataDir: dataDir("retention"),
      sessions: DASHBOARD_SESSIONS,
    });
    const slow = ret.panels.filter((p) => p.rollups && p.p50 >= 300);
    say(
      `## Retention: rollups of ${fmt(ret.sessions)} sessions over a year, archive of a month`,
    );
    say("");
    say(
      `Rollups of ${ret.rollupDays} days computed in ${fmt(ret.rollupMs / 1000, 1)} s. The sessions overview's panels as Grafana sends them (every filter at All) over a one-year range; "rollups" panels read the rolled-up days from the rollups and the others from the sessions, "raw" panels read the sessions (one warm-up, then 7 runs):`,
    );
    say("");
    say("| panel | reads | p50 ms | p95 ms | rows |");
    say("|---|---|---|---|---|");
    for (const p of ret.panels)
      say(
        `| ${p.panel} | ${p.rollups ? "rollups" : "raw"} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${p.rows} |`,
      );
    say("");
    say(
      `For comparison, the duration over time from 0013's reservoir quantiles state instead of the t-digest state: p50 ${fmt(ret.reservoir.p50)} ms, p95 ${fmt(ret.reservoir.p95)} ms.`,
    );
    say("");
    const exportRate = (ret.monthSessions * 1000) / ret.exportMs;
    const directRate = (ret.monthSessions * 1000) / ret.directMs;
    const ratio = exportRate / directRate;
    say(
      `archive export of ${ret.month} (${fmt(ret.monthSessions)} sessions): ${fmt(ret.exportMs / 1000, 1)} s, ${fmt(exportRate)} sessions/s (manifest, hashes and counts included); the engine writing the same sessions Parquet directly: ${fmt(ret.directMs / 1000, 1)} s, ${fmt(directRate)} rows/s; ratio ${fmt(ratio, 2)} (best of 2 each).`,
    );
    say("");
    targets.push(
      `1-year sessions overview, every panel that reads the rollups p50 < 300 ms: ${verdict(slow.length === 0)}`,
      `archive export ≥ 0.8 × the engine's direct Parquet write: ${verdict(ratio >= 0.8)}`,
    );
  }
  if (runs("scale"))
    await benchScale(say, targets, scaleSessions(SCALE ?? "1m"));
  say("## Targets");
  say("");
  for (const t of targets) say(`- ${t}`);
  // A partial run (BENCH_ONLY) prints its part but leaves the full results file alone.
  if (benchOnly(process.env) === undefined)
    writeFileSync(join(ROOT, "bench", "RESULTS.md"), `${lines.join("\n")}\n`);
}

/** Days of the alert-volume scenario: an ordinary fortnight of the simulator's organisation. */
const ALERT_DAYS = 14;

/**
 * The alert volume over an ordinary fortnight (the simulator without intruder options, its
 * default organisation and sessions a day): the hits of every rule and the alerts of those that
 * page, a day per 1,000 people, against the budget.
 */
async function benchAlerts(
  say: (s: string) => void,
  targets: string[],
): Promise<void> {
  process.stderr.write(`bench: alert volume over ${ALERT_DAYS} days…\n`);
  const sim = await startSimulator(["--history-days", String(ALERT_DAYS + 30)]);
  const a = await scenario<AlertBench>({
    kind: "alerts",
    url: sim.url,
    apiKey: API_KEY,
    dataDir: dataDir("alerts"),
    fromMs: END_MS - ALERT_DAYS * DAY,
    toMs: END_MS,
  }).finally(() => stop(sim));
  const rate = (n: number) => alertRate(n, a.days, a.people);
  say(`## Alert volume: ${a.days} ordinary days of the simulated organisation`);
  say("");
  say(
    `${fmt(a.people)} people, ${fmt(a.sessions)} sessions, no intruder option; every shipped rule over the days as if they had arrived live. Signals are every hit; alerts are what the rules that page fire (one per rule and actor while its hits come within ten minutes). Budget: ${ALERT_BUDGET_PER_DAY_PER_1000} alerts a day per 1,000 people (docs/detections.md, "Alert budget").`,
  );
  say("");
  say(
    "| rule | severity | pages | signals (hits) | alerts | alerts a day per 1,000 people |",
  );
  say("|---|---|---|---|---|---|");
  for (const r of a.rules)
    say(
      `| ${r.rule} | ${r.severity} | ${r.pages ? "yes" : "no"} | ${fmt(r.hits)} | ${fmt(r.alerts)} | ${fmt(rate(r.alerts), 2)} |`,
    );
  const alerts = a.rules.reduce((n, r) => n + r.alerts, 0);
  say(
    `| all | | | ${fmt(a.rules.reduce((n, r) => n + r.hits, 0))} | ${fmt(alerts)} | ${fmt(rate(alerts), 2)} |`,
  );
  say("");
  targets.push(
    `alerts of the rules that page over an ordinary fortnight ≤ ${ALERT_BUDGET_PER_DAY_PER_1000} a day per 1,000 people (${fmt(rate(alerts), 2)}): ${verdict(rate(alerts) <= ALERT_BUDGET_PER_DAY_PER_1000)}`,
  );
}

// The run's directory goes at the end, also when a part fails or the run is interrupted.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    removeRunDir();
    process.exit(1);
  });
try {
  await main();
} finally {
  removeRunDir();
}
