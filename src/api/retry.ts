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

/** True when the same request may succeed later (read operations have no side effects). */
export function isRetryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  if (RETRYABLE_CONNECT.has(err.code) || RETRYABLE_TRANSPORT.has(err.code))
    return true;
  // A non-JSON 5xx (a proxy's error page) or a 408/429 without a Connect body.
  return /^HTTP_(5\d\d|408|429)$/.test(err.code);
}

/**
 * True when the failure is about the caller, not the call: a refused or underprivileged key
 * gets the same answer on every request, so the rest of the run must not ask again (a wrong key
 * must not hammer the API). `not_found` is per call (a session that is gone).
 */
export function refusesEveryCall(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    (err.code === "unauthenticated" ||
      err.code === "permission_denied" ||
      err.code === "HTTP_401" ||
      err.code === "HTTP_403")
  );
}

/** Values below this are not Unix seconds of this century but a count of seconds from now. */
const UNIX_SECONDS_FLOOR = 1_000_000_000;

/**
 * Milliseconds until an `X-Ratelimit-Reset` instant, in Unix seconds; some proxies send
 * the seconds left instead, and reading those as an instant in 1970 would mean "retry now".
 */
export function resetWaitMs(reset: string, nowMs: number): number | undefined {
  const text = reset.trim();
  if (!/^\d+(\.\d+)?$/.test(text)) return undefined;
  const value = Number(text);
  const atMs = value < UNIX_SECONDS_FLOOR ? nowMs + value * 1000 : value * 1000;
  return Math.max(0, Math.ceil(atMs - nowMs));
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
    Number(remaining) <= 0
  ) {
    return resetWaitMs(reset, nowMs);
  }
  return undefined;
}

/**
 * What one run may still spend on retries, shared by every request of the run; and the first
 * refusal of the caller (refusesEveryCall), after which the run's calls fail without asking.
 */
export class RetryBudget {
  readonly total: number;
  #left: number;
  #refusal: ApiError | undefined;
  spent = 0;

  constructor(total: number) {
    this.total = total;
    this.#left = total;
  }

  take(): boolean {
    if (this.#left <= 0) return false;
    this.#left -= 1;
    this.spent += 1;
    return true;
  }

  get exhausted(): boolean {
    return this.#left <= 0;
  }

  refuse(err: ApiError): void {
    this.#refusal ??= err;
  }

  get refusal(): ApiError | undefined {
    return this.#refusal;
  }
}
