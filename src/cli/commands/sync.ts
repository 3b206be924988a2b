// `sessionhouse sync sessions|reconcile|aggregations|rollups|<entity stream>`: one stream now, incrementally from its
// checkpoint or as a backfill over --from/--to, with a progress bar on a terminal.
import type { Command } from "commander";
import type { AggregationJobConfig, Config } from "../../config/index.js";
import { checkJob } from "../../pipeline/aggregations.js";
import { withRun, type JobContext } from "../../pipeline/context.js";
import {
  aggregationName,
  AGGREGATIONS,
  ENTITY_STREAMS,
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
import {
  intArg,
  parseRange,
  type ParsedRange,
  type RangeFlags,
} from "../args.js";
import { createProgressObserver } from "../progress.js";
import { rangeFlags, subcommand } from "../options.js";
import { configFrom, withRuntime } from "../runtime.js";
import type { GlobalOptions, Runtime } from "../runtime.js";

type ReconcileFlags = RangeFlags & { days?: number };
type AggregationFlags = RangeFlags & { job?: string };

export function registerSyncCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  const sync = subcommand(program, "sync", {
    description: "sync one stream now, incrementally or as a backfill",
    access: "writes",
  });
  subcommand(sync, "sessions", {
    description:
      "page ListSessionsV2 into the sessions table (continues from the checkpoint without --from)",
    options: backfillFlags("-7d"),
    access: "writes",
  }).action((o: RangeFlags) => runSyncSessions(globals(), o));
  subcommand(sync, "reconcile", {
    description:
      "list the last days again and store the sessions the incremental sync missed (late sessions); compares listed and stored counts per window",
    options: [
      {
        flags: "--days <n>",
        help: "days before the sessions checkpoint (default sessions.reconcileDays)",
        parse: intArg("--days", 1, 3650),
      },
      ...rangeFlags(
        "reconcile from this instant instead (2026-11-01, RFC 3339, Unix seconds, -3d)",
        "reconcile up to this instant (default now)",
      ),
    ],
    access: "writes",
  }).action((o: ReconcileFlags) => runReconcile(globals(), o));
  subcommand(sync, "aggregations", {
    description:
      "fetch ListLogAggregations for every configured aggregation job (or one with --job)",
    options: [
      { flags: "--job <name>", help: "only this aggregation job" },
      ...backfillFlags("-30d"),
    ],
    access: "writes",
  }).action((o: AggregationFlags) => runSyncAggregations(globals(), o));
  subcommand(sync, "rollups", {
    description:
      "compute the daily rollups of every settled day that changed since it was computed (no API requests)",
    access: "writes",
  }).action(() => runSyncRollups(globals()));
  for (const stream of ENTITY_STREAMS)
    subcommand(sync, stream, {
      description: ENTITY_STREAM_HELP[stream],
      access: "writes",
    }).action(() => runSyncEntity(globals(), stream));
}

/** --from/--to of a backfill; `back` is the relative example, e.g. "-7d". */
const backfillFlags = (back: string) =>
  rangeFlags(
    `backfill from this instant (2026-11-01, RFC 3339, Unix seconds, ${back})`,
    "backfill up to this instant (default now)",
  );

const ENTITY_STREAM_HELP: Readonly<Record<EntityStream, string>> = {
  users:
    "GetUser for every user sessions and policy suspensions name: new ids, and known ones not read for streams.usersRefreshMs",
  user_devices: "ListUserDevices for every human user",
  native_users:
    "ListNativeUsers for every resource sessions name (credentials without their secrets)",
  identity_links: "ListNativeUserIdentityLinks, all links",
  inventory:
    "ListInventoryObjects, the whole inventory: one row per column and sub-column",
  policy_suspensions:
    "ListPolicySuspensions, the whole listing: every new version, and a removal for each one no longer listed",
  clouds: "ListIntegrationClouds",
};

async function runSyncEntity(
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

async function runSyncRollups(globals: GlobalOptions): Promise<void> {
  await withRuntime(
    configFrom(globals, {}, { needsApi: false }),
    "sync",
    async (rt) => {
      const r = await withRun(rt, ROLLUPS_JOB, (ctx) => rollUp(ctx));
      process.stdout.write(
        `rollups: ${r.sessionDays} session day(s) computed (${r.sessions} sessions), ${r.unsettledDays} waiting for open sessions, ${r.dataLabelDays} data-label day(s)\n`,
      );
    },
  );
}

async function runSyncSessions(
  globals: GlobalOptions,
  o: RangeFlags,
): Promise<void> {
  const range = parseRange(o);
  await withRuntime(configFrom(globals), "sync", async (rt) => {
    const r = await withProgress(rt, SESSIONS_JOB, (ctx) =>
      syncStream(ctx, SESSIONS_STREAM, range),
    );
    process.stdout.write(
      `sessions: ${r.rows} rows over ${r.windows} windows, ${r.deadLetters} dead-lettered, ${r.openRefreshed} open sessions re-read\n`,
    );
  });
}

async function runReconcile(
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
      `reconcile: ${r.windows} windows, ${r.missing} missing stored, ${r.differing} windows differing\n`,
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

async function runSyncAggregations(
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
        `${job.name}: ${r.rows} rows over ${r.windows} windows, ${r.deadLetters} dead-lettered${r.shrunk > 0 ? `, ${r.shrunk} shrunk (stored counts kept)` : ""}\n`,
      );
      if (r.poisoned.length > 0)
        process.stdout.write(
          `${job.name}: ${r.poisoned.length} poisoned window(s) hold the checkpoint: see \`sessionhouse windows list --job ${job.name}\`\n`,
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
  if (name && jobs.length === 0) {
    throw new UsageError(`there is no aggregation job named "${name}"`, {
      hint: `the configured jobs are: ${config.aggregations.jobs.map((j) => j.name).join(", ")}`,
    });
  }
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
