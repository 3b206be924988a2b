// /readyz: ClickHouse answers, no window is poisoned (an aggregation job's or the sessions
// stream's: it failed aggregations.maxWindowAttempts times and holds its checkpoint until an
// operator skips it), no job's last run found the control plane out of reach, refusing the key or
// failing TLS (at once: those do not pass by themselves), and no job is overdue. A job is overdue when its last successful
// run is older than three of its schedule periods plus its run deadline — long enough that one
// or two failed runs in a row are not an alarm, short enough that a stuck job is. A process
// that just started counts from its start, so it has that long for the first success. A process
// that does not hold the service lease is not ready: a standby waiting for it is live (/healthz)
// but runs no job (docs/scale-out.md, "Two processes on one database").
import type { JobState } from "../scheduler/scheduler.js";
import type { LeaseSnapshot } from "../scheduler/lease.js";
import { schedulePeriodMs } from "../scheduler/cron.js";
import { errorMessage } from "../util/errors.js";
import { splitUnsettled } from "../pipeline/status.js";
import { leaseHolderView, type LeaseHolderView } from "./status.js";

const OVERDUE_PERIODS = 3;

interface OverdueJob {
  job: string;
  /** Last success in this process (ISO), or null when there was none yet. */
  lastSuccessAt: string | null;
  overdueAfterMs: number;
  lateByMs: number;
}

export interface PoisonedWindowReport {
  job: string;
  /** A parent the stream could not read (its window empty), or absent for a window of time. */
  parent?: string;
  windowStart: string;
  windowEnd: string;
}

export interface ReadinessReport {
  ready: boolean;
  /** Why not, one short sentence per reason; empty when ready. */
  reasons: string[];
  clickhouse: { ok: boolean; error?: string };
  overdue: OverdueJob[];
  /** Windows that wait for an operator (`sessionhouse windows skip`); always set here. */
  poisonedWindows?: PoisonedWindowReport[];
  /**
   * Windows whose last fetch failed, fetched again on the next run; shown, not a reason to be
   * unready (one failed run is not an alarm). Always set here.
   */
  pendingWindows?: PoisonedWindowReport[];
  /** This process and the service lease, when the source gives it: its phase and the holder. */
  lease?: { phase: string; holder: LeaseHolderView | null };
  stopping: boolean;
}

const periodCache = new Map<string, number>();

export function overdueAfterMs(
  job: Pick<JobState, "schedule" | "deadlineMs">,
): number {
  let period = periodCache.get(job.schedule);
  if (period === undefined) {
    period = schedulePeriodMs(job.schedule);
    periodCache.set(job.schedule, period);
  }
  return OVERDUE_PERIODS * period + (job.deadlineMs ?? 0);
}

export function overdueJobs(
  jobs: readonly JobState[],
  nowMs: number,
  startedAtMs: number,
): OverdueJob[] {
  const out: OverdueJob[] = [];
  for (const job of jobs) {
    const limit = overdueAfterMs(job);
    const since = Math.max(job.lastSuccessMs ?? 0, startedAtMs);
    if (nowMs - since > limit) {
      out.push({
        job: job.job,
        lastSuccessAt:
          job.lastSuccessMs === undefined
            ? null
            : new Date(job.lastSuccessMs).toISOString(),
        overdueAfterMs: limit,
        lateByMs: nowMs - since - limit,
      });
    }
  }
  return out;
}

interface ReadinessSource {
  /** Resolves when ClickHouse answers; rejects (or resolves false) when it does not. */
  ping(): Promise<boolean>;
  jobs(): JobState[];
  startedAtMs: number;
  stopping(): boolean;
  nowMs?: () => number;
  /** Longest wait for the ping (default 5s): a probe must answer even when ClickHouse hangs. */
  pingTimeoutMs?: number;
  /** Where this process stands with the service lease (ready only while it holds it). */
  lease?: () => LeaseSnapshot;
  /**
   * Windows not stored of every job, read from the warehouse (asked only when ClickHouse
   * answers): the poisoned ones, and the pending ones when the source gives them (a window
   * without a state is poisoned).
   */
  poisonedWindows?: () => Promise<
    ReadonlyArray<{
      job: string;
      startMs: number;
      endMs: number;
      state?: string;
    }>
  >;
}

export async function checkReadiness(
  source: ReadinessSource,
): Promise<ReadinessReport> {
  const reasons: string[] = [];
  const clickhouse = await pingWithin(
    () => source.ping(),
    source.pingTimeoutMs ?? 5_000,
  );
  if (!clickhouse.ok)
    reasons.push(
      `ClickHouse does not answer: ${clickhouse.error ?? "no reason given"}`,
    );
  let poisonedWindows: PoisonedWindowReport[] = [];
  let pendingWindows: PoisonedWindowReport[] = [];
  if (clickhouse.ok && source.poisonedWindows) {
    try {
      const { pending, poisoned } = splitUnsettled(
        await source.poisonedWindows(),
      );
      pendingWindows = pending.map(windowReport);
      poisonedWindows = poisoned.map(windowReport);
    } catch (err) {
      reasons.push(`the poisoned windows cannot be read: ${errorMessage(err)}`);
    }
  }
  if (poisonedWindows.length > 0) {
    const first = poisonedWindows[0] as PoisonedWindowReport;
    reasons.push(
      `${poisonedWindows.length} window(s) poisoned (first: job ${first.job} ${first.parent === undefined ? `at ${first.windowStart}` : `parent ${first.parent}`}); their checkpoints wait: see \`sessionhouse windows list\`, then \`sessionhouse windows skip\``,
    );
  }
  const overdue = overdueJobs(
    source.jobs(),
    (source.nowMs ?? Date.now)(),
    source.startedAtMs,
  );
  for (const job of source.jobs())
    if (job.lastApiTrouble !== undefined)
      reasons.push(
        `job ${job.job}: the control plane ${job.lastApiTrouble}; the job keeps retrying on its schedule`,
      );
  for (const o of overdue) {
    reasons.push(
      `job ${o.job} has not succeeded ${o.lastSuccessAt ? `since ${o.lastSuccessAt}` : "since the service started"} (allowed ${Math.round(o.overdueAfterMs / 1000)} s)`,
    );
  }
  const lease = source.lease?.();
  const leaseReason = lease ? leaseNotHeld(lease) : undefined;
  if (leaseReason) reasons.push(leaseReason);
  const stopping = source.stopping();
  if (stopping) reasons.push("the service is shutting down");
  return {
    ready: reasons.length === 0,
    reasons,
    clickhouse,
    overdue,
    poisonedWindows,
    pendingWindows,
    ...(lease
      ? {
          lease: {
            phase: lease.phase,
            holder: lease.holder ? leaseHolderView(lease.holder) : null,
          },
        }
      : {}),
    stopping,
  };
}

/** Why a process is not ready for the lease; undefined while it holds it. */
function leaseNotHeld(lease: LeaseSnapshot): string | undefined {
  const h = lease.holder;
  const by = h
    ? ` (held by ${h.command}, pid ${h.owner.pid} on ${h.owner.host}, since ${new Date(h.acquiredAtMs).toISOString()})`
    : "";
  switch (lease.phase) {
    case "held":
      return undefined;
    case "lost":
      return `the service lease was lost${by}: this process stops its jobs`;
    case "released":
      return "the service lease was released: this process is stopping";
    default:
      return `standby: waiting for the service lease${by}`;
  }
}

function windowReport(w: {
  job: string;
  parent?: string;
  startMs: number;
  endMs: number;
}): PoisonedWindowReport {
  return {
    job: w.job,
    ...(w.parent ? { parent: w.parent } : {}),
    windowStart: new Date(w.startMs).toISOString(),
    windowEnd: new Date(w.endMs).toISOString(),
  };
}

async function pingWithin(
  ping: () => Promise<boolean>,
  ms: number,
): Promise<{ ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ ok: boolean; error: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, error: `no answer within ${ms} ms` }),
      ms,
    );
    timer.unref();
  });
  try {
    return await Promise.race([
      ping().then(
        (ok) => (ok ? { ok: true } : { ok: false, error: "ping failed" }),
        (err: unknown) => ({ ok: false, error: errorMessage(err) }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
