// The status report: for every job, how far its data is (checkpoint, lag), how its last run
// went, what is stored, what was dead-lettered, which windows wait, when it runs next, and the
// retention in force — read from the warehouse only (nothing written), so it works beside a
// running service. `sessionhouse status` prints it. How far a stream is and which windows wait
// come from the status read model (src/pipeline/status.ts), which /metrics, /readyz and the
// reports read too; this adds what needs the jobs' plans and schedules.
import { keyRefusedIn } from "../api/errors.js";
import type { Config } from "../config/index.js";
import { nextRuns } from "../scheduler/cron.js";
import {
  entityRowCounts,
  deadLetterCounts,
  lastRuns,
  lastSuccesses,
  type RunRecord,
  type Warehouse,
  countHeldSessions,
  isActive,
  listHolds,
  type LegalHold,
  existingTables,
  appliedRetention,
  type AppliedRetention,
  rollupStatus,
  type RollupStatus,
  countStoredSessions,
  Tables,
  countSessionsToPoll,
  countVanishedSessions,
  aggregationRowCounts,
  type WindowRecord,
  readLease,
  type LeaseClaim,
} from "../warehouse/index.js";
import { planJobs, type JobKind, type JobPlan } from "../scheduler/jobs.js";
import { streamKey, type StreamJob } from "../pipeline/streams.js";
import { STREAM_SPECS } from "../pipeline/stream-specs.js";
import {
  checkpointLagMs,
  checkpointPositions,
  splitUnsettled,
  waitingWindows,
} from "../pipeline/status.js";

interface LastRun {
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

interface JobStatus {
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

interface PoisonedWindow {
  /** A parent the stream could not read (its window empty), or null for a window of time. */
  parent: string | null;
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
  /** The service lease; null where its table is not created yet. */
  lease: LeaseStatus | null;
  jobs: JobStatus[];
  /**
   * The jobs whose last run failed because the control plane refused the API key or its
   * permissions (keyRefusedIn), with the first one's error; null when none did.
   */
  keyRefused: { jobs: string[]; error: string } | null;
  retention: RetentionStatus;
}

/** A claim of the service lease as status, /readyz and the logs show it. */
export interface LeaseHolderView {
  host: string;
  pid: number;
  /** The command that holds it: run, sync or demo. */
  command: string;
  /** When its tenure began (server clock). */
  since: string;
  /** When it lapses unless renewed (server clock). */
  expires: string;
}

export interface LeaseStatus {
  /** The process that runs the jobs now; null when none holds the lease. */
  holder: LeaseHolderView | null;
  /** When none holds it: the last claim seen (in the last day) and how it ended. */
  last: (LeaseHolderView & { ended: "released" | "expired" }) | null;
}

export function leaseHolderView(c: LeaseClaim): LeaseHolderView {
  return {
    host: c.owner.host,
    pid: c.owner.pid,
    command: c.command,
    since: iso(c.acquiredAtMs),
    expires: iso(c.expiresAtMs),
  };
}

async function leaseStatus(
  w: Warehouse,
  tables: ReadonlySet<string>,
): Promise<LeaseStatus | null> {
  if (!tables.has(Tables.serviceLease)) return null;
  const state = await readLease(w);
  if (state.holder)
    return { holder: leaseHolderView(state.holder), last: null };
  const last = state.owners[0];
  return {
    holder: null,
    last: last
      ? {
          ...leaseHolderView(last),
          ended: last.released ? "released" : "expired",
        }
      : null,
  };
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
  const jobs = plans.map((plan) => jobStatus(plan, stored, nowMs));
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
    lease: await leaseStatus(w, stored.tables),
    jobs,
    keyRefused: keyRefusedOf(jobs),
    retention: await collectRetention(w, stored.tables, nowMs),
  };
}

/** The jobs whose last run the control plane refused for the key, and the first one's error. */
function keyRefusedOf(
  jobs: readonly JobStatus[],
): { jobs: string[]; error: string } | null {
  const refused = jobs.filter(
    (j) => j.lastRun?.status === "failed" && keyRefusedIn(j.lastRun.error),
  );
  const first = refused[0]?.lastRun;
  return first ? { jobs: refused.map((j) => j.job), error: first.error } : null;
}

async function readStored(
  w: Warehouse,
  config: Config,
  plans: readonly JobPlan[],
  nowMs: number,
): Promise<Stored> {
  const tables = await existingTables(w);
  const names = plans.map((p) => p.name);
  const unsettled = new Map<string, WindowRecord[]>();
  if (tables.has(Tables.streamWindows))
    for (const r of await waitingWindows(w))
      unsettled.set(r.job, [...(unsettled.get(r.job) ?? []), r]);
  return {
    tables,
    checkpoints: new Map(
      tables.has(Tables.checkpoints)
        ? (await checkpointPositions(w, plans)).map((c) => [
            c.stream,
            c.positionMs,
          ])
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
  const storesRows = plan.sync !== undefined;
  const key = plan.sync && streamKey(plan.sync);
  const { pending, poisoned } = splitUnsettled(
    key === undefined ? [] : (stored.unsettled.get(key) ?? []),
  );
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
        : Math.round(checkpointLagMs(position, nowMs) / 1000),
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
    pendingWindows: key !== undefined ? pending.length : null,
    poisonedWindows: poisoned.map((r) => ({
      parent: r.parent === "" ? null : r.parent,
      windowStart: iso(r.startMs),
      windowEnd: iso(r.endMs),
      attempts: r.attempts,
      lastError: r.lastError,
    })),
  };
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
    if (plan.sync) {
      counts = await streamRows(w, plan.sync, tables);
    } else if (
      plan.kind === "open-refresh" &&
      tables.has(Tables.sessions) &&
      tables.has(Tables.sessionPolls)
    ) {
      counts.open = await countSessionsToPoll(w, {
        unknownSinceMs: nowMs - config.sessions.unknownStatusPollMs,
      });
      counts.vanished = await countVanishedSessions(w);
    }
    out.set(plan.name, counts);
  }
  return out;
}

/** The rows a stream job stored, by table, as its entry's history rule keeps them. */
async function streamRows(
  w: Warehouse,
  job: StreamJob,
  tables: ReadonlySet<string>,
): Promise<Record<string, number>> {
  const history = STREAM_SPECS[job.stream].history;
  switch (history.kind) {
    case "sessionKeys":
      return tables.has(Tables.sessions)
        ? { sessions: await countStoredSessions(w) }
        : {};
    case "windowVersions":
      return aggregationRowCounts(w, streamKey(job), tables);
    case "current":
    case "versions":
      return entityRowCounts(w, history, tables);
  }
}

export interface RetentionStatus {
  /** The TTL each table was last given from the retention settings. */
  tables: AppliedRetention[];
  rollups: RollupStatus[];
  /** Holds in force now (not released, `until` not passed). */
  activeHolds: LegalHold[];
  /** Session ids whose stored rows carry the hold flag. */
  heldSessions: number;
}

/** The TTL each governed table was given, the rollups computed, and the legal holds in force. */
async function collectRetention(
  w: Warehouse,
  tables: ReadonlySet<string>,
  nowMs: number,
): Promise<RetentionStatus> {
  const holds = tables.has(Tables.legalHolds) ? await listHolds(w) : [];
  return {
    tables: tables.has(Tables.retentionSettings)
      ? await appliedRetention(w)
      : [],
    rollups: tables.has(Tables.rollupDays) ? await rollupStatus(w) : [],
    activeHolds: holds.filter((h) => isActive(h, nowMs)),
    heldSessions: tables.has(Tables.legalHolds)
      ? await countHeldSessions(w)
      : 0,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
