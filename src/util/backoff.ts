// The wait between two tries of anything the exporter retries (API calls, ClickHouse inserts):
// exponential in the attempt, capped, with full jitter so that many clients do not retry in step.
// Each side keeps its own budget of tries; the formula is this one.

export interface BackoffOptions {
  /** Ceiling of the first wait (attempt 0). */
  baseMs: number;
  /** No wait is longer than this. */
  maxMs: number;
  random?: () => number;
}

/**
 * The longest wait after attempt `attempt` (0 for the first): `baseMs` doubled with each attempt,
 * never past `maxMs`. It never shrinks from one attempt to the next.
 */
export function backoffCeilingMs(
  attempt: number,
  opts: Pick<BackoffOptions, "baseMs" | "maxMs">,
): number {
  return Math.min(opts.maxMs, opts.baseMs * 2 ** attempt);
}

/** Exponential backoff with full jitter; a server's own wait wins when it is longer. */
export function backoffMs(
  attempt: number,
  opts: BackoffOptions,
  serverWaitMs?: number,
): number {
  const ceiling = backoffCeilingMs(attempt, opts);
  const jittered = Math.floor((opts.random ?? Math.random)() * ceiling);
  return serverWaitMs !== undefined
    ? Math.max(serverWaitMs, jittered)
    : jittered;
}
