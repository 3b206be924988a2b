// The jobs of the service and how each one runs under the scheduler: the sessions stream, the
// re-read of sessions still open, the reconciliation of the last days, the daily rollups, and
// every enabled aggregation job. `planJobs` needs only the
// configuration (the status command uses it); `pipelineJobs` binds the plan to a runtime.
import type { ControlPlaneApi } from "../api/control-plane.js";
import type { Config } from "../config/index.js";
import {
  withRun,
  type JobContext,
  type RunObserver,
} from "../pipeline/context.js";
import { refreshOpenSessions } from "../pipeline/open-sessions.js";
import { reconcileSessions, recentRange } from "../pipeline/reconcile.js";
import { rollUp } from "../pipeline/rollups.js";
import { floorSecond } from "../sources/windows.js";
import type { Logger } from "../util/logger.js";
import { readCheckpoint, type Warehouse } from "../warehouse/index.js";
import type { RunControl, ScheduledJob } from "./scheduler.js";
import { schedulePeriodMs } from "./cron.js";
import {
  aggregationName,
  AGGREGATIONS,
  SESSIONS_JOB,
  SESSIONS_STREAM,
  OPEN_REFRESH_JOB,
  RECONCILE_JOB,
  ROLLUPS_JOB,
  DETECTIONS_JOB,
  ENTITY_STREAMS,
  type EntityStream,
} from "../pipeline/names.js";
import { syncStream, type StreamJob } from "../pipeline/streams.js";
import {
  evaluateRules,
  SESSION_WRITERS_WAIT_MS,
  waitForSessionWriters,
} from "../detections/evaluate.js";
import { historicalAfterMs } from "../detections/history.js";
import { loadRules, ruleDirs } from "../detections/rule.js";

export { RECONCILE_JOB };

/**
 * Longest a scheduled run may take before it is aborted (it resumes from its checkpoint on the
 * next tick). Not configurable yet; a first sync of a large organisation is the long case.
 */
export const DEFAULT_RUN_DEADLINE_MS = 3_600_000;

export type JobKind =
  | "sessions"
  | "open-refresh"
  | "reconcile"
  | "rollups"
  | "aggregation"
  | "entity"
  | "detections";

/**
 * The live jobs: the sync of new sessions and the detections over what it stored. The scheduler
 * keeps a slot for them, so no other job's long run delays what people are detected doing.
 */
const LIVE_KINDS: ReadonlySet<JobKind> = new Set(["sessions", "detections"]);

/** The kinds of job that sync a stream of the catalogue. */
type StreamJobKind = "sessions" | "aggregation" | "entity";

export type JobPlan = {
  /** Name in the `runs` table. */
  name: string;
  schedule: string;
  /** False for an aggregation job with `enabled: false`, and the reconciliation of 0 days. */
  enabled: boolean;
  deadlineMs: number;
  /** Checkpoint stream the job advances; the refresh and the reconciliation have none. */
  stream: string | undefined;
} & (
  | {
      kind: StreamJobKind;
      /** The stream the job syncs, and how (streams.ts). */
      sync: StreamJob;
    }
  | { kind: Exclude<JobKind, StreamJobKind>; sync?: undefined }
);

/** `policy_suspensions` → `policySuspensions`, as a type. */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;

/**
 * The cron schedule of an entity stream: `streams.<stream in camelCase>Schedule`. The key's type
 * is derived from the stream's name, so a stream without its schedule does not compile.
 */
function entitySchedule(config: Config, stream: EntityStream): string {
  const camel = stream.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  return config.streams[
    `${camel}Schedule` as `${CamelCase<EntityStream>}Schedule`
  ];
}

/**
 * Each job's schedule as `run` records it (job_schedules): the lag alert and the "Lag per stream"
 * panel judge a stream against its job's period, the longest gap between two ticks.
 */
export function plannedSchedules(
  plans: readonly JobPlan[],
): { job: string; schedule: string; periodMs: number }[] {
  return plans.map((p) => ({
    job: p.name,
    schedule: p.schedule,
    periodMs: schedulePeriodMs(p.schedule),
  }));
}

/**
 * Every job of a configuration, in a stable order. Disabled jobs are left out unless asked for
 * (the status command lists them).
 */
export function planJobs(
  config: Config,
  options: { includeDisabled?: boolean } = {},
): JobPlan[] {
  const deadlineMs = DEFAULT_RUN_DEADLINE_MS;
  const plans: JobPlan[] = [
    {
      name: SESSIONS_JOB,
      kind: "sessions",
      schedule: config.sessions.schedule,
      enabled: true,
      deadlineMs,
      stream: SESSIONS_STREAM,
      // The open sessions are re-read by their own job on their own schedule.
      sync: { stream: SESSIONS_STREAM, options: { skipOpenRefresh: true } },
    },
    {
      name: OPEN_REFRESH_JOB,
      kind: "open-refresh",
      schedule: config.sessions.refreshSchedule,
      enabled: true,
      deadlineMs,
      stream: undefined,
    },
    {
      name: RECONCILE_JOB,
      kind: "reconcile",
      schedule: config.sessions.reconcileSchedule,
      enabled: config.sessions.reconcileDays > 0,
      deadlineMs,
      stream: undefined,
    },
    {
      name: ROLLUPS_JOB,
      kind: "rollups",
      schedule: config.retention.rollupSchedule,
      enabled: true,
      deadlineMs,
      stream: undefined,
    },
    ...config.aggregations.jobs.map((job): JobPlan => ({
      name: aggregationName(job),
      kind: "aggregation",
      schedule: job.schedule,
      enabled: job.enabled,
      deadlineMs,
      stream: aggregationName(job),
      sync: { stream: AGGREGATIONS, options: { job } },
    })),
    ...ENTITY_STREAMS.map((stream): JobPlan => ({
      name: stream,
      kind: "entity",
      schedule: entitySchedule(config, stream),
      enabled: config.streams.enabled,
      deadlineMs,
      stream,
      sync: { stream, options: {} },
    })),
    // Last: it reads what the others store.
    {
      name: DETECTIONS_JOB,
      kind: "detections",
      schedule: config.detections.schedule,
      enabled: true,
      deadlineMs,
      stream: undefined,
    },
  ];
  return plans.filter(
    (plan) => plan.enabled || options.includeDisabled === true,
  );
}

export interface PipelineDeps {
  config: Config;
  api: ControlPlaneApi;
  warehouse: Warehouse;
  logger: Logger;
  /** Metrics and the like; called for every run. */
  observer?: RunObserver | undefined;
}

/** The plan bound to a runtime: what the scheduler runs. */
export function pipelineJobs(
  deps: PipelineDeps,
  plans: readonly JobPlan[] = planJobs(deps.config),
): ScheduledJob[] {
  return plans
    .filter((plan) => plan.enabled)
    .map((plan) => ({
      name: plan.name,
      schedule: plan.schedule,
      deadlineMs: plan.deadlineMs,
      live: LIVE_KINDS.has(plan.kind),
      run: (control: RunControl) => runPlan(deps, plan, control),
    }));
}

/** Why a job runs at the start of `run` rather than at its next tick. */
export interface DueAtStart {
  job: string;
  reason: "the key's check" | "never succeeded" | "overdue";
}

/**
 * The jobs `run` starts at once, without waiting for their tick, in plan order: the sessions job
 * always (its first read is the check of the key: a refused key shows in /readyz and `status`
 * within seconds), every job that never succeeded, and every job whose last success is older
 * than its schedule's period (a tick was missed while nothing ran). `lastSuccess`: the last
 * successful run of each job, from the runs table, by any process.
 */
export function dueAtStart(
  plans: readonly JobPlan[],
  lastSuccess: ReadonlyMap<string, number>,
  nowMs: number,
): DueAtStart[] {
  const due: DueAtStart[] = [];
  for (const plan of plans) {
    if (!plan.enabled) continue;
    const last = lastSuccess.get(plan.name);
    if (plan.kind === "sessions")
      due.push({ job: plan.name, reason: "the key's check" });
    else if (last === undefined)
      due.push({ job: plan.name, reason: "never succeeded" });
    else if (nowMs - last > schedulePeriodMs(plan.schedule))
      due.push({ job: plan.name, reason: "overdue" });
  }
  return due;
}

async function runPlan(
  deps: PipelineDeps,
  plan: JobPlan,
  control: RunControl,
): Promise<void> {
  const run = new AbortController();
  const hardStop = () => run.abort(control.signal.reason);
  if (control.signal.aborted) hardStop();
  control.signal.addEventListener("abort", hardStop, { once: true });
  const observer = composeObservers(
    deps.observer,
    stopAtCheckpoint(deps.logger, plan, control, run),
  );
  try {
    await withRun({ ...deps, signal: run.signal, observer }, plan.name, (ctx) =>
      runJob(ctx, plan),
    );
  } finally {
    control.signal.removeEventListener("abort", hardStop);
  }
}

/**
 * Right after a checkpoint nothing is in flight and everything it covers is stored: the one
 * point where a shutdown can end a run without wasting work. Later steps see the aborted
 * signal and stop before sending anything.
 */
function stopAtCheckpoint(
  logger: Logger,
  plan: JobPlan,
  control: RunControl,
  run: AbortController,
): RunObserver {
  return {
    onCheckpoint: () => {
      if (control.stopping.aborted && !run.signal.aborted) {
        logger.info(
          { job: plan.name },
          "stopping the run at a checkpoint for shutdown",
        );
        run.abort(new Error("stopped at a checkpoint for shutdown"));
      }
    },
  };
}

/** The work of one run of `plan`. */
async function runJob(ctx: JobContext, plan: JobPlan): Promise<void> {
  switch (plan.kind) {
    case "sessions":
    case "aggregation":
    case "entity":
      await syncStream(ctx, plan.sync.stream, plan.sync.options);
      return;
    case "open-refresh":
      await runOpenRefresh(ctx);
      return;
    case "reconcile":
      await runReconcile(ctx);
      return;
    case "rollups":
      await rollUp(ctx);
      return;
    case "detections":
      await runDetections(ctx);
      return;
  }
}

/**
 * Every rule (read again at each run, so an edited rule counts from the next tick) over what
 * arrived since its checkpoint; a rule file that cannot be read fails the run, naming it.
 */
async function runDetections(ctx: JobContext): Promise<void> {
  const rules = loadRules(ruleDirs(ctx.config.detections.dir));
  await waitForSessionWriters(
    ctx.warehouse,
    SESSION_WRITERS_WAIT_MS,
    ctx.signal,
  );
  const results = await evaluateRules(ctx.warehouse, rules, {
    insert: ctx.insert,
    initialLookbackMs: ctx.config.detections.initialLookbackMs,
    historicalAfterMs: historicalAfterMs(ctx.config),
    nowMs: Date.now(),
  });
  const hits = results.reduce((n, r) => n + r.hits, 0);
  ctx.counters.rowsInserted += hits;
  ctx.logger.info({ rules: rules.length, hits }, "detections evaluated");
}

/**
 * The sessions job re-reads everything from (checkpoint − lookback); what started before that
 * and is still open is this job's to follow.
 */
async function runOpenRefresh(ctx: JobContext): Promise<void> {
  const cp = await readCheckpoint(ctx.warehouse, SESSIONS_STREAM);
  if (!cp) {
    ctx.logger.debug("no sessions synced yet, nothing to re-read");
    return;
  }
  await refreshOpenSessions(ctx, {
    beforeMs: floorSecond(cp.positionMs - ctx.config.sessions.lookbackMs),
  });
}

/** The last `sessions.reconcileDays` before the sessions checkpoint, once there is one. */
async function runReconcile(ctx: JobContext): Promise<void> {
  const range = await recentRange(
    ctx,
    ctx.config.sessions.reconcileDays,
    Date.now(),
  );
  if (!range.checkpointed) {
    ctx.logger.debug("no sessions synced yet, nothing to reconcile");
    return;
  }
  await reconcileSessions(ctx, range);
}

/** One observer that calls each of the given ones in order. */
export function composeObservers(
  ...observers: ReadonlyArray<RunObserver | undefined>
): RunObserver {
  const list = observers.filter((o): o is RunObserver => o !== undefined);
  return {
    onProgress: (e) => list.forEach((o) => o.onProgress?.(e)),
    onRows: (e) => list.forEach((o) => o.onRows?.(e)),
    onDeadLetters: (e) => list.forEach((o) => o.onDeadLetters?.(e)),
    onCheckpoint: (e) => list.forEach((o) => o.onCheckpoint?.(e)),
    onWindowsShrunk: (e) => list.forEach((o) => o.onWindowsShrunk?.(e)),
    onWindowsPoisoned: (e) => list.forEach((o) => o.onWindowsPoisoned?.(e)),
    onSessionsVanished: (e) => list.forEach((o) => o.onSessionsVanished?.(e)),
    onReconcileMissing: (e) => list.forEach((o) => o.onReconcileMissing?.(e)),
    onReconcileWindowsDiffering: (e) =>
      list.forEach((o) => o.onReconcileWindowsDiffering?.(e)),
    onRunEnd: (e) => list.forEach((o) => o.onRunEnd?.(e)),
  };
}
