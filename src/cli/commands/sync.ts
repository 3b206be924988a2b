// `sessionhouse sync sessions|reconcile|aggregations|rollups|<entity stream>`: one stream now, incrementally from its
// checkpoint or as a backfill over --from/--to, with a progress bar on a terminal.
import type { AggregationJobConfig, Config } from "../../config/index.js";
import { checkJob } from "../../pipeline/aggregations.js";
import { withRun, type JobContext } from "../../pipeline/context.js";
import {
  aggregationName,
  AGGREGATIONS,
  RECONCILE_JOB,
  ROLLUPS_JOB,
  SESSIONS_JOB,
  SESSIONS_STREAM,
  type EntityStream,
} from "../../pipeline/names.js";
import { rollUp } from "../../pipeline/rollups.js";
import { syncStream } from "../../pipeline/streams.js";
import {
  reconcileSessions,
  recentRange,
  type ReconcileOptions,
} from "../../pipeline/reconcile.js";
import { UsageError } from "../../util/errors.js";
import { noSuchName } from "../../util/nearest.js";
import { parseRange, type ParsedRange, type RangeFlags } from "../args.js";
import { createProgressObserver } from "../progress.js";
import { configFrom, withRuntime } from "../runtime.js";
import type { GlobalOptions, Runtime } from "../runtime.js";
import { counted } from "../output.js";
import {
  recordBackfillHits,
  type EvaluationResult,
} from "../../detections/evaluate.js";
import { historicalAfterMs } from "../../detections/history.js";
import {
  DetectionRuleError,
  loadRules,
  ruleDirs,
} from "../../detections/rule.js";

type ReconcileFlags = RangeFlags & { days?: number };
type AggregationFlags = RangeFlags & { job?: string };

export async function runSyncEntity(
  globals: GlobalOptions,
  stream: EntityStream,
): Promise<void> {
  await withRuntime(configFrom(globals), "sync", async (rt) => {
    const r = await withProgress(rt, stream, (ctx) =>
      syncStream(ctx, stream, {}),
    );
    process.stdout.write(
      `${stream}: ${r.read} read in ${r.requests} requests, ${r.changed} new versions, ${r.gone} gone, ${r.deadLetters} dead-lettered\n`,
    );
  });
}

export async function runSyncRollups(globals: GlobalOptions): Promise<void> {
  await withRuntime(
    configFrom(globals, {}, { needsApi: false }),
    "sync",
    async (rt) => {
      const r = await withRun(rt, ROLLUPS_JOB, (ctx) => rollUp(ctx));
      process.stdout.write(
        `rollups: ${counted(r.sessionDays, "session day")} computed (${counted(r.sessions, "session")}), ${r.unsettledDays} waiting for open sessions, ${counted(r.dataLabelDays, "data-label day")}, ${counted(r.environmentDays, "environment day")}\n`,
      );
    },
  );
}

export async function runSyncSessions(
  globals: GlobalOptions,
  o: RangeFlags,
): Promise<void> {
  const range = parseRange(o);
  await withRuntime(configFrom(globals), "sync", async (rt) => {
    const { r, history } = await withProgress(rt, SESSIONS_JOB, async (ctx) => {
      const storedFromMs = Date.now();
      const synced = await syncStream(ctx, SESSIONS_STREAM, range);
      // A backfill's sessions are history: their hits are recorded (historical, never paged)
      // within its run, before the detections job reads them.
      return {
        r: synced,
        history:
          range.fromMs === undefined
            ? undefined
            : await backfillHits(ctx, storedFromMs),
      };
    });
    process.stdout.write(
      `sessions: ${counted(r.rows, "row")} over ${counted(r.windows, "window")}, ${r.deadLetters} dead-lettered, ${counted(r.openRefreshed, "open session")} re-read\n`,
    );
    for (const h of history ?? [])
      process.stdout.write(
        `detections: ${h.rule}: ${counted(h.historical, "historical hit")}${h.hits > h.historical ? `, ${counted(h.hits - h.historical, "recent hit")} (events within the age of history, judged as any arrival)` : ""}\n`,
      );
  });
}

/**
 * The rules' hits on what a backfill stored (recordBackfillHits). A rule that cannot be read
 * does not fail the backfill, whose sessions are stored: the line says so, and the detections job
 * judges those sessions by their age when it reads them.
 */
async function backfillHits(
  ctx: JobContext,
  storedFromMs: number,
): Promise<EvaluationResult[]> {
  try {
    return await recordBackfillHits(
      ctx.warehouse,
      loadRules(ruleDirs(ctx.config.detections.dir)),
      {
        insert: ctx.insert,
        initialLookbackMs: 0,
        nowMs: Date.now(),
        historicalAfterMs: historicalAfterMs(ctx.config),
        fromMs: storedFromMs,
      },
    );
  } catch (err) {
    if (!(err instanceof DetectionRuleError)) throw err;
    process.stderr.write(
      `detections: not evaluated on the backfill: ${err.message}; the detections job marks its hits historical by age when it reads them\n`,
    );
    return [];
  }
}

export async function runReconcile(
  globals: GlobalOptions,
  o: ReconcileFlags,
): Promise<void> {
  const range = parseRange(o);
  if (o.days !== undefined && range.fromMs !== undefined)
    throw new UsageError("give either --days or --from, not both", {
      hint: "--days counts back from the sessions checkpoint; --from/--to name a range",
    });
  const config = configFrom(globals);
  const days = o.days ?? config.sessions.reconcileDays;
  if (range.fromMs === undefined && days === 0)
    throw new UsageError(
      "sessions.reconcileDays is 0 (SESSIONHOUSE_RECONCILE_DAYS) and no range was given",
      { hint: "give --days N or --from T" },
    );
  await withRuntime(config, "sync", async (rt) => {
    const r = await withProgress(rt, RECONCILE_JOB, async (ctx) =>
      reconcileSessions(ctx, await reconcileRange(ctx, range, days)),
    );
    process.stdout.write(
      `reconcile: ${counted(r.windows, "window")}, ${r.missing} missing stored, ${counted(r.differing, "window")} differing\n`,
    );
  });
}

/** --from/--to when given (ending now at the latest), else the `days` before the checkpoint. */
async function reconcileRange(
  ctx: JobContext,
  range: ParsedRange,
  days: number,
): Promise<ReconcileOptions> {
  if (range.fromMs === undefined) return recentRange(ctx, days, range.nowMs);
  return {
    fromMs: range.fromMs,
    toMs: Math.min(range.toMs ?? range.nowMs, range.nowMs),
  };
}

export async function runSyncAggregations(
  globals: GlobalOptions,
  o: AggregationFlags,
): Promise<void> {
  const range = parseRange(o);
  const config = configFrom(globals);
  const jobs = selectAggregationJobs(config, o.job);
  for (const job of jobs) checkJob(job);
  await withRuntime(config, "sync", async (rt) => {
    for (const job of jobs) {
      const r = await withProgress(rt, aggregationName(job), (ctx) =>
        syncStream(ctx, AGGREGATIONS, { ...range, job }),
      );
      process.stdout.write(
        `${job.name}: ${counted(r.rows, "row")} over ${counted(r.windows, "window")}, ${r.deadLetters} dead-lettered${r.shrunk > 0 ? `, ${r.shrunk} shrunk (stored counts kept)` : ""}\n`,
      );
      if (r.poisoned.length > 0)
        process.stdout.write(
          `${job.name}: ${counted(r.poisoned.length, "poisoned window")} ${r.poisoned.length === 1 ? "holds" : "hold"} the checkpoint: see \`sessionhouse windows list --job ${job.name}\`\n`,
        );
    }
  });
}

/** The job named by --job, even a disabled one; without --job, every enabled job. */
function selectAggregationJobs(
  config: Config,
  name: string | undefined,
): AggregationJobConfig[] {
  const jobs = config.aggregations.jobs.filter((j) =>
    name ? j.name === name : j.enabled,
  );
  if (name && jobs.length === 0)
    throw noSuchName(
      ["aggregation job", "configured aggregation jobs"],
      name,
      config.aggregations.jobs.map((j) => j.name),
      "nothing was synced",
    );
  return jobs;
}

/** One run of `job`, reporting its progress on stderr (a bar on a terminal) until it ends. */
async function withProgress<T>(
  rt: Runtime,
  job: string,
  fn: (ctx: JobContext) => Promise<T>,
): Promise<T> {
  const progress = createProgressObserver(rt.logger);
  return withRun({ ...rt, observer: progress }, job, fn).finally(() =>
    progress.close(),
  );
}
