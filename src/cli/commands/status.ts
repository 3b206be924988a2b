// `sessionhouse status [--json]`: for every job, how far its data is (checkpoint, lag), how its
// last run went, what is stored, what was dead-lettered and when it runs next — read from the
// warehouse only (no API settings needed, nothing written), so it works beside a running
// service: on a ClickHouse server directly, on the embedded engine through the service's read
// access (the service holds the data directory), on a stopped one's data directory itself.
import type { Command } from "commander";
import type { Config } from "../../config/index.js";
import { nextRuns } from "../../scheduler/cron.js";
import {
  aggregationRowCounts,
  countSessionsToPoll,
  countStoredSessions,
  countVanishedSessions,
  deadLetterCounts,
  entityRowCounts,
  existingTables,
  lastRuns,
  lastSuccesses,
  openWarehouse,
  readCheckpoints,
  type RunRecord,
  Tables,
  unsettledWindows,
  type Warehouse,
  type WindowRecord,
} from "../../warehouse/index.js";
import { planJobs, type JobKind, type JobPlan } from "../../scheduler/jobs.js";
import { heading, printTable } from "../output.js";
import {
  collectRetention,
  printRetention,
  type RetentionStatus,
} from "./status-retention.js";
import {
  configFrom,
  READS_THROUGH_SERVICE,
  type GlobalOptions,
} from "../runtime.js";
import { SESSIONS_STREAM } from "../../pipeline/names.js";

export function registerStatusCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  program
    .command("status")
    .description(
      "show every job's checkpoint, lag, last run, rows stored, dead letters and next run",
    )
    .option("--json", "print one JSON document for programs instead of a table")
    .addHelpText("after", READS_THROUGH_SERVICE)
    .action(async (o: { json?: boolean }) => {
      const config = configFrom(globals(), {}, { needsApi: false });
      const w = await openWarehouse(config, { access: "read" });
      try {
        const report = await collectStatus(w, config);
        if (o.json)
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else printStatus(report);
      } finally {
        await w.close();
      }
    });
}

export interface LastRun {
  runId: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  pages: number;
  rowsInserted: number;
  deadLetters: number;
  retries: number;
  error: string;
}

export interface JobStatus {
  job: string;
  kind: JobKind;
  enabled: boolean;
  schedule: string;
  /** Checkpoint stream, null for the open-session refresh and the reconciliation (they keep none). */
  stream: string | null;
  checkpoint: string | null;
  lagSeconds: number | null;
  lastRun: LastRun | null;
  lastSuccessAt: string | null;
  /** Rows stored for the job (FINAL; aggregation rows with count 0 are superseded, not counted). */
  rowsStored: number | null;
  rowsByTable: Record<string, number>;
  /** Open-session refresh only: sessions it follows (not final, not vanished). */
  openSessions: number | null;
  /** Open-session refresh only: sessions marked vanished, no longer re-read. */
  vanishedSessions: number | null;
  deadLetters: number;
  nextRunAt: string | null;
  /** Aggregation jobs and sessions: windows fetched again on the next run (null for other jobs). */
  pendingWindows: number | null;
  /**
   * Aggregation jobs and sessions: windows that failed aggregations.maxWindowAttempts times and
   * hold the checkpoint until an operator skips them (aggregation windows are no longer fetched).
   */
  poisonedWindows: PoisonedWindow[];
}

export interface PoisonedWindow {
  windowStart: string;
  windowEnd: string;
  attempts: number;
  lastError: string;
}

export interface StatusReport {
  generatedAt: string;
  warehouse: {
    kind: string;
    location: string;
    database: string;
    migrated: boolean;
    /** Embedded engine held by a running service: read through it (its process and URL). */
    throughService: { pid: number; url: string } | null;
  };
  jobs: JobStatus[];
  retention: RetentionStatus;
}

/** What the warehouse holds about the jobs, read once for the whole report. */
interface Stored {
  tables: ReadonlySet<string>;
  checkpoints: ReadonlyMap<string, number>;
  lastRuns: ReadonlyMap<string, RunRecord>;
  lastSuccess: ReadonlyMap<string, number>;
  deadLetters: ReadonlyMap<string, number>;
  rows: ReadonlyMap<string, Record<string, number>>;
  unsettled: ReadonlyMap<string, WindowRecord[]>;
}

export async function collectStatus(
  w: Warehouse,
  config: Config,
  nowMs = Date.now(),
): Promise<StatusReport> {
  const plans = planJobs(config, { includeDisabled: true });
  const stored = await readStored(w, config, plans, nowMs);
  const has = (t: string) => stored.tables.has(t);
  return {
    generatedAt: iso(nowMs),
    warehouse: {
      kind: w.service ? "embedded" : w.kind,
      location: w.location,
      database: w.database,
      migrated:
        has(Tables.checkpoints) && has(Tables.runs) && has(Tables.deadLetters),
      throughService: w.service
        ? { pid: w.service.pid, url: w.service.url }
        : null,
    },
    jobs: plans.map((plan) => jobStatus(plan, stored, nowMs)),
    retention: await collectRetention(w, stored.tables, nowMs),
  };
}

async function readStored(
  w: Warehouse,
  config: Config,
  plans: readonly JobPlan[],
  nowMs: number,
): Promise<Stored> {
  const tables = await existingTables(w);
  const names = plans.map((p) => p.name);
  const ledgerKeys = plans.flatMap((p) => {
    const key = ledgerKey(p);
    return key === undefined ? [] : [key];
  });
  const unsettled = new Map<string, WindowRecord[]>();
  if (tables.has(Tables.streamWindows))
    for (const r of await unsettledWindows(w, ledgerKeys))
      unsettled.set(r.job, [...(unsettled.get(r.job) ?? []), r]);
  return {
    tables,
    checkpoints: new Map(
      tables.has(Tables.checkpoints)
        ? (await readCheckpoints(w)).map((c) => [c.stream, c.positionMs])
        : [],
    ),
    lastRuns: new Map(
      tables.has(Tables.runs)
        ? (await lastRuns(w, names)).map((r) => [r.job, r])
        : [],
    ),
    lastSuccess: tables.has(Tables.runs)
      ? await lastSuccesses(w, names)
      : new Map(),
    deadLetters: tables.has(Tables.deadLetters)
      ? await deadLetterCounts(w, names)
      : new Map(),
    rows: await storedRows(w, config, plans, tables, nowMs),
    unsettled,
  };
}

function jobStatus(plan: JobPlan, stored: Stored, nowMs: number): JobStatus {
  const position = plan.stream
    ? stored.checkpoints.get(plan.stream)
    : undefined;
  const run = stored.lastRuns.get(plan.name);
  const success = stored.lastSuccess.get(plan.name);
  const next = plan.enabled ? nextRuns(plan.schedule, 1)[0] : undefined;
  const byTable = stored.rows.get(plan.name) ?? {};
  const storesRows =
    plan.kind === "sessions" ||
    plan.kind === "aggregation" ||
    plan.kind === "entity";
  const key = ledgerKey(plan);
  const windows = key === undefined ? [] : (stored.unsettled.get(key) ?? []);
  return {
    job: plan.name,
    kind: plan.kind,
    enabled: plan.enabled,
    schedule: plan.schedule,
    stream: plan.stream ?? null,
    checkpoint: position === undefined ? null : iso(position),
    lagSeconds:
      position === undefined
        ? null
        : Math.max(0, Math.round((nowMs - position) / 1000)),
    lastRun: run ? lastRun(run) : null,
    lastSuccessAt: success === undefined ? null : iso(success),
    rowsStored: storesRows
      ? Object.values(byTable).reduce((a, b) => a + b, 0)
      : null,
    rowsByTable: storesRows ? byTable : {},
    openSessions: plan.kind === "open-refresh" ? (byTable.open ?? 0) : null,
    vanishedSessions:
      plan.kind === "open-refresh" ? (byTable.vanished ?? 0) : null,
    deadLetters: stored.deadLetters.get(plan.name) ?? 0,
    nextRunAt: next === undefined ? null : iso(next),
    pendingWindows:
      key !== undefined
        ? windows.filter((r) => r.state === "pending").length
        : null,
    poisonedWindows: windows
      .filter((r) => r.state === "poisoned")
      .map((r) => ({
        windowStart: iso(r.startMs),
        windowEnd: iso(r.endMs),
        attempts: r.attempts,
        lastError: r.lastError,
      })),
  };
}

/** The name a job's windows go by in stream_windows, for the jobs that keep windows there. */
function ledgerKey(plan: JobPlan): string | undefined {
  if (plan.aggregation) return plan.aggregation.name;
  return plan.kind === "sessions" ? SESSIONS_STREAM : undefined;
}

function lastRun(run: RunRecord): LastRun {
  return {
    runId: run.runId,
    status: run.status,
    startedAt: iso(run.startedAtMs),
    finishedAt: run.finishedAtMs === undefined ? null : iso(run.finishedAtMs),
    pages: run.pages,
    rowsInserted: run.rowsInserted,
    deadLetters: run.deadLetters,
    retries: run.retries,
    error: run.error,
  };
}

/** Rows stored per job and table; tables that do not exist yet count as absent, not as errors. */
async function storedRows(
  w: Warehouse,
  config: Config,
  plans: readonly JobPlan[],
  tables: ReadonlySet<string>,
  nowMs: number,
): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  for (const plan of plans) {
    let counts: Record<string, number> = {};
    if (plan.kind === "sessions" && tables.has(Tables.sessions)) {
      counts.sessions = await countStoredSessions(w);
    } else if (
      plan.kind === "open-refresh" &&
      tables.has(Tables.sessions) &&
      tables.has(Tables.sessionPolls)
    ) {
      counts.open = await countSessionsToPoll(w, {
        unknownSinceMs: nowMs - config.sessions.unknownStatusPollMs,
      });
      counts.vanished = await countVanishedSessions(w);
    } else if (plan.kind === "aggregation" && plan.aggregation) {
      counts = await aggregationRowCounts(w, plan.aggregation.name, tables);
    } else if (plan.kind === "entity" && plan.entity) {
      counts = await entityRowCounts(w, plan.entity, tables);
    }
    out.set(plan.name, counts);
  }
  return out;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** "3d 4h", "12m 5s", "40s": the two largest units, enough to read at a glance. */
export function humanDuration(seconds: number): string {
  const units: ReadonlyArray<readonly [string, number]> = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  const total = Math.max(0, Math.round(seconds));
  const i = units.findIndex(([, size]) => total >= size);
  const [unit, size] = units[i] ?? ["s", 1];
  const first = Math.floor(total / size);
  const rest = total - first * size;
  const next = units[i + 1];
  if (i < 0 || !next || rest === 0) return `${first}${unit}`;
  return `${first}${unit} ${Math.floor(rest / next[1])}${next[0]}`;
}

function shortTime(isoText: string | null): string {
  return isoText === null
    ? ""
    : isoText.replace("T", " ").replace(/\.\d{3}Z$/, "Z");
}

export function printStatus(
  report: StatusReport,
  out: NodeJS.WritableStream = process.stdout,
): void {
  const wh = report.warehouse;
  const through = wh.throughService
    ? ` (read through the running service, pid ${wh.throughService.pid})`
    : "";
  out.write(
    `ClickHouse ${wh.kind} at ${wh.location}${through}, database ${wh.database}, ${report.generatedAt}\n`,
  );
  if (!wh.migrated)
    out.write(
      "The tables are not created yet: run `sessionhouse migrate` or start `sessionhouse run`.\n",
    );
  heading("Jobs", out);
  printTable(
    report.jobs.map((j) => ({
      job: j.job,
      schedule: j.enabled ? j.schedule : `${j.schedule} (disabled)`,
      checkpoint: j.stream === null ? "—" : shortTime(j.checkpoint) || "never",
      lag: j.lagSeconds === null ? "" : humanDuration(j.lagSeconds),
      "last run": j.lastRun
        ? `${j.lastRun.status} ${shortTime(j.lastRun.finishedAt ?? j.lastRun.startedAt)}`
        : "never",
      rows:
        j.openSessions !== null
          ? `${j.openSessions} open, ${j.vanishedSessions ?? 0} vanished`
          : j.rowsStored === null
            ? ""
            : String(j.rowsStored),
      "dead letters": j.deadLetters,
      "next run": shortTime(j.nextRunAt) || "—",
    })),
    out,
  );
  const pending = report.jobs.filter((j) => (j.pendingWindows ?? 0) > 0);
  if (pending.length > 0) {
    heading(
      "Pending windows (fetched again on the next run; the checkpoint waits at the first)",
      out,
    );
    for (const j of pending)
      out.write(
        `  ${j.job}: ${j.pendingWindows ?? 0} window(s), see sessionhouse windows list --job ${j.job}\n`,
      );
  }
  const poisoned = report.jobs.filter((j) => j.poisonedWindows.length > 0);
  if (poisoned.length > 0) {
    heading(
      "Poisoned windows (they wait for an operator; the checkpoint waits at the first)",
      out,
    );
    for (const j of poisoned)
      for (const p of j.poisonedWindows)
        out.write(
          `  ${j.job} ${p.windowStart}: ${p.attempts} attempts, ${p.lastError.split("\n")[0] ?? ""}\n` +
            `    once the cause is known: sessionhouse windows skip ${j.job} --window ${p.windowStart} --reason "..."\n`,
        );
  }
  printRetention(report.retention, out);
  const failed = report.jobs.filter(
    (j) =>
      j.lastRun &&
      (j.lastRun.status === "failed" || j.lastRun.status === "abandoned") &&
      j.lastRun.error,
  );
  if (failed.length > 0) {
    heading("Last errors", out);
    for (const j of failed)
      out.write(`  ${j.job}: ${j.lastRun?.error ?? ""}\n`);
  }
}
