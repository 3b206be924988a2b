// The re-read of sessions still open, one by one through GetSession, so that a session is
// followed until it completes however long it runs. Followed: every stored session whose status
// is not final, except those marked vanished and those in a status the exporter does not know
// that started more than `sessions.unknownStatusPollMs` ago (such a status is stored as it comes
// and followed like an open one, for a bounded time). A session GetSession answers `not_found`
// for keeps its last stored row; after `sessions.vanishAfterMisses` such answers in a row it is
// marked vanished and never asked for again.
import {
  type SessionPoll,
  sessionsToPoll,
  type SessionToPoll,
  writeSessionPolls,
} from "../warehouse/index.js";
import type { JobContext } from "./context.js";
import { SessionWriter } from "./session-writer.js";

export interface OpenRefreshOptions {
  /** Only sessions that started before this instant: the sync's windows re-read the later ones. */
  beforeMs: number;
  /** The clock (epoch ms) that ages unknown statuses; tests pass the simulator's. */
  nowMs?: number | undefined;
}

/** Re-reads the sessions still followed; returns how many GetSession answered. */
export async function refreshOpenSessions(
  ctx: JobContext,
  options: OpenRefreshOptions,
): Promise<number> {
  const cfg = ctx.config.sessions;
  const nowMs = options.nowMs ?? Date.now();
  const polls = await sessionsToPoll(ctx.warehouse, {
    beforeMs: options.beforeMs,
    unknownSinceMs: nowMs - cfg.unknownStatusPollMs,
  });
  if (polls.length === 0) return 0;
  ctx.logger.info({ open: polls.length }, "re-reading open sessions");
  const { changed, missing } = await reReadAll(ctx, polls);
  // After the rows: a crash in between only leaves a miss uncounted, asked again next time.
  await writeSessionPolls(ctx.warehouse, changed, ctx.insert);
  reportMisses(ctx, changed, missing);
  return polls.length - missing;
}

interface ReReadOutcome {
  /** Poll states that change: a miss, or a read after misses. */
  changed: SessionPoll[];
  /** How many sessions GetSession did not find. */
  missing: number;
}

/**
 * Asks GetSession for every session of `polls`, `api.connections` at a time, and writes the
 * sessions it answers with; the first failure stops the other workers at once instead of
 * letting each find its own.
 */
async function reReadAll(
  ctx: JobContext,
  polls: readonly SessionToPoll[],
): Promise<ReReadOutcome> {
  const vanishAfterMisses = ctx.config.sessions.vanishAfterMisses;
  const outcome: ReReadOutcome = { changed: [], missing: 0 };
  const writer = new SessionWriter(ctx);
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const reRead = async (poll: SessionToPoll) => {
    const session = await ctx.api
      .getSession(poll.id, { signal, budget: ctx.budget })
      .catch((err: unknown) => {
        stop.abort(err);
        throw err;
      });
    const change = pollChange(poll, session !== undefined, vanishAfterMisses);
    if (change !== undefined) outcome.changed.push(change);
    if (session === undefined) {
      outcome.missing++;
      return;
    }
    await writer.add(
      [{ text: JSON.stringify(session), value: session }],
      Date.now(),
    );
  };
  try {
    const concurrency = Math.max(1, ctx.config.api.connections);
    await forEachConcurrently(polls, concurrency, signal, reRead);
    await writer.drain();
  } finally {
    await writer.settle();
  }
  return outcome;
}

/**
 * The new poll state of a session after one GetSession: one more miss when it was not found
 * (vanished at `vanishAfterMisses`), the misses reset when it was found after some, and
 * nothing to store when it was found with none.
 */
function pollChange(
  poll: SessionToPoll,
  found: boolean,
  vanishAfterMisses: number,
): SessionPoll | undefined {
  if (!found) {
    const misses = poll.misses + 1;
    return {
      sessionId: poll.id,
      misses,
      vanished: misses >= vanishAfterMisses,
      polledAtMs: Date.now(),
      lastError: "not_found",
    };
  }
  if (poll.misses === 0) return undefined;
  return {
    sessionId: poll.id,
    misses: 0,
    vanished: false,
    polledAtMs: Date.now(),
    lastError: "",
  };
}

/**
 * Runs `task` on each item in order, at most `concurrency` at a time; once `signal` is
 * aborted no worker takes another item.
 */
async function forEachConcurrently<T>(
  items: readonly T[],
  concurrency: number,
  signal: AbortSignal,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length && !signal.aborted)
      await task(items[next++] as T);
  };
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, worker),
  );
}

function reportMisses(
  ctx: JobContext,
  changed: readonly SessionPoll[],
  missing: number,
): void {
  if (missing > 0) {
    ctx.logger.warn(
      { missing },
      "open sessions the service no longer knows keep their last stored state",
    );
  }
  const vanished = changed.filter((p) => p.vanished);
  for (const p of vanished) {
    ctx.logger.warn(
      { sessionId: p.sessionId, misses: p.misses },
      "session vanished: GetSession no longer finds it; its last stored state is kept and it is not re-read again",
    );
  }
  if (vanished.length > 0)
    ctx.observer.onSessionsVanished?.({
      job: ctx.job,
      count: vanished.length,
    });
}
