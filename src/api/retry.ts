// Which failures are worth another try, and how long to wait: pure functions, tested alone.
import { ApiError } from "./errors.js";

const RETRYABLE_CONNECT = new Set([
  "unavailable",
  "resource_exhausted",
  "deadline_exceeded",
  "aborted",
  "internal",
  "unknown",
]);

const RETRYABLE_TRANSPORT = new Set([
  "NETWORK",
  "TIMEOUT",
  "BODY_CUT",
  "BAD_RESPONSE",
]);

/** True when the same request may succeed later (reads are side-effect free: API-FACTS). */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (RETRYABLE_CONNECT.has(err.code) || RETRYABLE_TRANSPORT.has(err.code))
    return true;
  // A non-JSON 5xx (a proxy's error page) or a 408/429 without a Connect body.
  return /^HTTP_(5\d\d|408|429)$/.test(err.code);
}

/** Exponential backoff with full jitter; a server's own wait wins when it is longer. */
export function backoffMs(
  attempt: number,
  opts: { baseMs: number; maxMs: number; random?: () => number },
  serverWaitMs?: number,
): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** attempt);
  const jittered = Math.floor((opts.random ?? Math.random)() * ceiling);
  return serverWaitMs !== undefined
    ? Math.max(serverWaitMs, jittered)
    : jittered;
}

/** Milliseconds to wait from `Retry-After` (seconds or HTTP date) or `X-Ratelimit-Reset` (Unix seconds). */
export function serverWaitMs(
  headers: Readonly<Record<string, string | string[] | undefined>>,
  nowMs: number,
): number | undefined {
  const first = (v: string | string[] | undefined) =>
    Array.isArray(v) ? v[0] : v;
  const retryAfter = first(headers["retry-after"]);
  if (retryAfter !== undefined) {
    if (/^\d+(\.\d+)?$/.test(retryAfter.trim()))
      return Math.round(Number(retryAfter) * 1000);
    const at = Date.parse(retryAfter);
    if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  }
  const reset = first(headers["x-ratelimit-reset"]);
  const remaining = first(headers["x-ratelimit-remaining"]);
  if (
    reset !== undefined &&
    remaining !== undefined &&
    Number(remaining) <= 0 &&
    /^\d+$/.test(reset.trim())
  ) {
    return Math.max(0, Number(reset) * 1000 - nowMs);
  }
  return undefined;
}

/** Retries a run may still spend; shared by every request of one run. */
export class RetryBudget {
  #left: number;
  spent = 0;
  constructor(total: number) {
    this.#left = total;
  }
  take(): boolean {
    if (this.#left <= 0) return false;
    this.#left -= 1;
    this.spent += 1;
    return true;
  }
}
