// `sessionhouse windows …`: the windows of the aggregation jobs and of the sessions stream that
// are not stored yet, and what an operator does about one that keeps failing. `list` reads only;
// `skip` records who let the checkpoint pass a window and why; `forget` drops every row of an
// aggregation job so that it starts again (never an operator's skip, and nothing of any other
// stream).
import { windowLabel } from "../../sources/session-pages.js";
import { UsageError } from "../../util/errors.js";
import { parseInstant } from "../../util/time.js";
import {
  forgetJob,
  type ForgetResult,
  hasWindowTables,
  listWindows,
  type Warehouse,
  WINDOW_STATES,
  type WindowRecord,
  type WindowState,
  storedAggregationJobs,
  windowJobs,
  writeWindows,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { decision, type DecisionFlags } from "../operator.js";
import { printListing } from "../output.js";
import { configFrom, type GlobalOptions } from "../runtime.js";
import {
  aggregationName,
  backfillPrefix,
  ENTITY_STREAMS,
  SESSIONS_STREAM,
} from "../../pipeline/names.js";
import { byNearness, noSuchName } from "../../util/nearest.js";
import type { Config } from "../../config/index.js";

interface ListFlags {
  job?: string;
  all?: boolean;
  json?: boolean;
}

type SkipFlags = DecisionFlags & { window?: string; parent?: string };

/** `windows list`: reads only; a warehouse without the window tables has none. */
export async function runWindowsList(
  globals: GlobalOptions,
  o: ListFlags,
): Promise<void> {
  const job = o.job === undefined ? undefined : jobName(o.job);
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "read", async (w) => {
    if (job !== undefined) await checkJob(w, config, job, "nothing was listed");
    const states: readonly WindowState[] = o.all
      ? WINDOW_STATES
      : ["pending", "poisoned"];
    const found = (await hasWindowTables(w))
      ? await listWindows(w, { job, states })
      : [];
    printWindows(found, o, job);
  });
}

function printWindows(
  found: readonly WindowRecord[],
  o: ListFlags,
  job: string | undefined,
): void {
  printListing(found, o.json, {
    json: windowJson,
    row: (r) => ({
      job: r.job,
      window: r.parent === "" ? windowLabel(r) : `parent ${r.parent}`,
      state: r.state,
      attempts: r.attempts,
      "last error": r.lastError.split("\n")[0] ?? "",
      "skipped by": r.skippedBy ? `${r.skippedBy}: ${r.skipReason}` : "",
    }),
    none: `no ${o.all ? "" : "pending or poisoned "}windows${job ? ` for job ${job}` : ""}`,
    noun: "window",
  });
}

/** `windows skip`: marks one waiting window skipped, with who and why. */
export async function runWindowsSkip(
  globals: GlobalOptions,
  name: string,
  o: SkipFlags,
): Promise<void> {
  const job = jobName(name);
  const target = skipTarget(o);
  const { by, reason } = decision(
    o,
    "say why the window can be left without data",
  );
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "write", async (w) => {
    await checkJob(w, config, job, "nothing was skipped");
    const waiting = await waitingWindow(w, job, target);
    await writeWindows(
      w,
      [
        {
          ...waiting,
          state: "skipped",
          skippedBy: by,
          skipReason: reason,
        },
      ],
      { retries: config.clickhouse.insertRetries },
    );
    process.stdout.write(
      waiting.parent === ""
        ? `${job} ${windowLabel(waiting)} skipped by ${by}; the job's next run moves its checkpoint past it\n`
        : `${job} parent ${waiting.parent} skipped by ${by}; it is still read on every run, and its failure no longer holds the checkpoint\n`,
    );
  });
}

/**
 * Refuses a job that has no windows and can have none: the names `windows` knows are sessions,
 * the configured aggregation jobs, the entity streams and any job with a window stored (one
 * since removed from the configuration); they are offered nearest first.
 */
async function checkJob(
  w: Warehouse,
  config: Config,
  job: string,
  nothingDone: string,
): Promise<void> {
  const known = new Set<string>([
    SESSIONS_STREAM,
    ...config.aggregations.jobs.map((j) => j.name),
    ...ENTITY_STREAMS,
  ]);
  if (known.has(job)) return;
  const stored = await windowJobs(w);
  if (stored.includes(job)) return;
  throw noSuchName(["job", "jobs"], job, [...known, ...stored], nothingDone);
}

/** What `windows skip` names: a window by its start, or a parent. */
type SkipTarget = { startMs: number } | { parent: string };

function skipTarget(o: SkipFlags): SkipTarget {
  if ((o.window === undefined) === (o.parent === undefined))
    throw new UsageError(
      "name one window (--window) or one parent (--parent)",
      {
        hint: "`sessionhouse windows list` shows the windows and parents waiting",
      },
    );
  if (o.parent !== undefined) return { parent: o.parent };
  return { startMs: parseInstant(o.window ?? "", "--window", Date.now()) };
}

/** The pending or poisoned window or parent of `job` named by `target`; a usage error naming the others if none. */
async function waitingWindow(
  w: Warehouse,
  job: string,
  target: SkipTarget,
): Promise<WindowRecord> {
  const open = await listWindows(w, { job, states: ["pending", "poisoned"] });
  const found = open.find((r) =>
    "parent" in target
      ? r.parent === target.parent
      : r.parent === "" && r.startMs === target.startMs,
  );
  if (found) return found;
  const named = open.map((r) =>
    r.parent === "" ? new Date(r.startMs).toISOString() : `parent ${r.parent}`,
  );
  throw new UsageError(
    `job ${job} has no pending or poisoned ${"parent" in target ? `parent ${target.parent}` : `window starting at ${new Date(target.startMs).toISOString()}`}`,
    {
      hint:
        open.length === 0
          ? "`sessionhouse windows list` shows the windows waiting; this job has none"
          : `its waiting windows and parents: ${named.join(", ")}`,
    },
  );
}

/**
 * `windows forget`: deletes every row and checkpoint of an aggregation job, only with --yes,
 * and prints what it deleted. Only an aggregation job (configured, or with rows stored) can be
 * forgotten: any other name is refused naming those jobs, nearest first; a window an operator
 * skipped stays on record.
 */
export async function runWindowsForget(
  globals: GlobalOptions,
  name: string,
  o: { yes?: boolean },
): Promise<void> {
  const job = jobName(name);
  if (job === SESSIONS_STREAM)
    throw new UsageError(
      "forget deletes the rows of an aggregation job; sessions is the sessions stream",
      {
        hint: "to let the sessions checkpoint pass a window, use `sessionhouse windows skip sessions --window T --reason ...`",
      },
    );
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "write", async (w) => {
    const jobs = await forgettableJobs(w, config.aggregations.jobs);
    if (!jobs.includes(job)) throw notForgettable(job, jobs);
    if (!o.yes)
      throw new UsageError(
        `forget deletes every stored row of aggregation job ${job}`,
        { hint: "add --yes to confirm" },
      );
    const stream = aggregationName({ name: job });
    const done = await forgetJob(w, job, {
      stream,
      backfillPrefix: backfillPrefix(stream),
    });
    process.stdout.write(forgotten(job, done));
  });
}

/** The aggregation jobs forget knows: configured, or with rows stored (a job since removed). */
async function forgettableJobs(
  w: Warehouse,
  configured: readonly { name: string }[],
): Promise<string[]> {
  const names = new Set(configured.map((j) => j.name));
  for (const job of await storedAggregationJobs(w)) names.add(job);
  return [...names];
}

/** The refusal of a name that is no aggregation job: what it is, and the jobs, nearest first. */
function notForgettable(job: string, jobs: readonly string[]): UsageError {
  const offered =
    jobs.length === 0
      ? "no aggregation job is configured or stored"
      : `the aggregation jobs, nearest first: ${byNearness(job, jobs).join(", ")}`;
  if ((ENTITY_STREAMS as readonly string[]).includes(job))
    return new UsageError(
      `forget deletes the rows of an aggregation job; ${job} is an entity stream, whose waiting parents and the decisions taken about them are kept`,
      {
        hint: `to let its checkpoint pass a parent it cannot read, use \`sessionhouse windows skip ${job} --parent ID --reason ...\`; ${offered}`,
      },
    );
  return noSuchName(
    ["aggregation job", "aggregation jobs"],
    job,
    jobs,
    "nothing was deleted",
  );
}

/** What forget prints: the rows and checkpoints it deleted, and the skips it kept. */
function forgotten(job: string, done: ForgetResult): string {
  const counted = Object.entries(done.rows).filter(([, n]) => n > 0);
  const rows = counted.reduce((sum, [, n]) => sum + n, 0);
  const lines = [
    rows === 0 && done.checkpoints === 0
      ? `${job}: nothing was stored; deleted 0 rows and 0 checkpoints`
      : `${job}: deleted ${rows} rows${counted.length > 0 ? ` (${counted.map(([t, n]) => `${t} ${n}`).join(", ")})` : ""} and ${done.checkpoints} checkpoint${done.checkpoints === 1 ? "" : "s"}; its next run starts from nothing`,
  ];
  for (const r of done.keptSkips)
    lines.push(
      `${job} window ${windowLabel(r)}: kept skipped by ${r.skippedBy} (${r.skipReason}); an operator's decision stays on record, and the job does not read this window again`,
    );
  return `${lines.join("\n")}\n`;
}

/** An aggregation job's name; its run name (`aggregations.NAME`) is taken as well. */
function jobName(job: string): string {
  return job.replace(/^aggregations\./, "");
}

function windowJson(r: WindowRecord) {
  return {
    job: r.job,
    parent: r.parent || null,
    windowStart: new Date(r.startMs).toISOString(),
    windowEnd: new Date(r.endMs).toISOString(),
    state: r.state,
    attempts: r.attempts,
    lastError: r.lastError,
    skippedBy: r.skippedBy || null,
    skipReason: r.skipReason || null,
    updatedAt: new Date(r.updatedAtMs).toISOString(),
  };
}
