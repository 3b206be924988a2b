// The re-read of sessions still open, one by one through GetSession, so that a session is
// followed until it completes however long it runs. Followed: every stored session whose status
// is not final, except those marked vanished and those in a status the exporter does not know
// that started more than `sessions.unknownStatusPollMs` ago (such a status is stored as it comes
// and followed like an open one, for a bounded time). A session GetSession answers `not_found`
// for keeps its last stored row; after `sessions.vanishAfterMisses` such answers in a row it is
// marked vanished and never asked for again.
import {
  sessionsToPoll,
  writeSessionPolls,
  type SessionPoll,
  type SessionToPoll,
} from "../warehouse/session-polls.js";
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
  const writer = new SessionWriter(ctx);
  /** Poll states that change: a miss, or a read after misses. */
  const changed: SessionPoll[] = [];
  let missing = 0;
  const concurrency = Math.max(1, ctx.config.api.connections);
  let next = 0;
  // The first failure stops the other workers at once instead of letting each find its own.
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const reRead = async (poll: SessionToPoll) => {
    const session = await ctx.api
      .getSession(poll.id, { signal, budget: ctx.budget })
      .catch((err: unknown) => {
        stop.abort(err);
        throw err;
      });
    if (session === undefined) {
      missing++;
      const misses = poll.misses + 1;
      changed.push({
        sessionId: poll.id,
        misses,
        vanished: misses >= cfg.vanishAfterMisses,
        polledAtMs: Date.now(),
        lastError: "not_found",
      });
      return;
    }
    if (poll.misses > 0)
      changed.push({
        sessionId: poll.id,
        misses: 0,
        vanished: false,
        polledAtMs: Date.now(),
        lastError: "",
      });
    await writer.add(
      [{ text: JSON.stringify(session), value: session }],
      Date.now(),
    );
  };
  const worker = async () => {
    while (next < polls.length && !signal.aborted)
      await reRead(polls[next++] as SessionToPoll);
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, polls.length) }, worker),
    );
    await writer.drain();
  } finally {
    await writer.settle();
  }
  // After the rows: a crash in between only leaves a miss uncounted, asked again next time.
  await writeSessionPolls(ctx.warehouse, changed, ctx.insert);
  reportMisses(ctx, changed, missing);
  return polls.length - missing;
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
