// How fast the client may ask: request slots under a rate ceiling, the service's own limits
// (X-Ratelimit-*, Retry-After) pushing the next slot out, and a bounded number of connections.
// One Pacer per client; the header readers are pure functions.
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Longest wait a Retry-After / X-Ratelimit-Reset may impose on one retry. Beyond it the run
 * fails with the service's wait in the message: the next scheduled run picks up from the
 * checkpoint, instead of a process hanging for hours on one header.
 */
export const MAX_SERVER_WAIT_MS = 10 * 60_000;

export type ResponseHeaders = Readonly<
  Record<string, string | string[] | undefined>
>;

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
  headers: ResponseHeaders,
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
 * Milliseconds to leave between requests once X-Ratelimit-Remaining falls to a tenth of
 * X-Ratelimit-Limit: what is left of the window spread evenly over the rest of it (slower,
 * never refused); undefined while the service's limit is far or its headers are absent.
 */
export function rateLimitSpacingMs(
  headers: ResponseHeaders,
  nowMs: number,
): number | undefined {
  const remaining = Number(headers["x-ratelimit-remaining"]);
  const limit = Number(headers["x-ratelimit-limit"]);
  const reset = headers["x-ratelimit-reset"];
  if (
    !Number.isFinite(remaining) ||
    !Number.isFinite(limit) ||
    limit <= 0 ||
    typeof reset !== "string"
  )
    return undefined;
  if (remaining > limit * 0.1) return undefined;
  const untilResetMs = resetWaitMs(reset, nowMs);
  if (untilResetMs === undefined) return undefined;
  const spacing = remaining <= 0 ? untilResetMs : untilResetMs / remaining;
  return Math.min(spacing, MAX_SERVER_WAIT_MS);
}

export interface PacerOptions {
  maxRequestsPerSecond: number;
  /** Requests on the wire at once (the connection pool's size). */
  connections: number;
  /** The monotonic clock (default performance.now). */
  now?: () => number;
}

export class Pacer {
  readonly #rps: number;
  readonly #connections: number;
  readonly #now: () => number;
  /** Earliest instant of the next request, on the monotonic clock. */
  #nextSlotMs = 0;
  /** Monotonic instants the latest requests were sent at, oldest first (see throttle). */
  readonly #sent: number[] = [];
  #inFlight = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(opts: PacerOptions) {
    this.#rps = opts.maxRequestsPerSecond;
    this.#connections = opts.connections;
    this.#now = opts.now ?? (() => performance.now());
  }

  /** Earliest monotonic instant the next request may leave at. */
  get nextSlotMs(): number {
    return this.#nextSlotMs;
  }

  /** Requests holding a connection now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** No request leaves for `waitMs`: a server's wait holds for the whole client. */
  holdFor(waitMs: number): void {
    this.#nextSlotMs = Math.max(this.#nextSlotMs, this.#now() + waitMs);
  }

  /** Reads X-Ratelimit-* of an answer and spreads what is left of the window before it runs out. */
  observe(headers: ResponseHeaders): void {
    const spacing = rateLimitSpacingMs(headers, Date.now());
    if (spacing !== undefined) this.holdFor(spacing);
  }

  /**
   * Waits for a request slot: slots are 1000 / maxRequestsPerSecond ms apart on the monotonic
   * clock, so requests go out evenly; the service's own limits (observe, holdFor) push the next
   * slot further out. The ceiling itself is kept by the log of actual send times: timers fire
   * late on a busy event loop, and late timers fire together, so no more than
   * floor(maxRequestsPerSecond) requests (at least one) leave within any second.
   */
  async throttle(signal: AbortSignal): Promise<void> {
    const rps = this.#rps;
    const now = this.#now();
    const slot = Math.max(now, this.#nextSlotMs);
    this.#nextSlotMs = slot + 1000 / rps;
    if (slot > now) await sleep(Math.ceil(slot - now), undefined, { signal });
    const perWindow = Math.max(1, Math.floor(rps));
    const windowMs = Math.max(1000, 1000 / rps);
    for (;;) {
      const t = this.#now();
      const oldest =
        this.#sent.length >= perWindow
          ? this.#sent[this.#sent.length - perWindow]
          : undefined;
      if (oldest === undefined || t - oldest >= windowMs) {
        this.#sent.push(t);
        if (this.#sent.length > perWindow)
          this.#sent.splice(0, this.#sent.length - perWindow);
        return;
      }
      await sleep(Math.ceil(windowMs - (t - oldest)), undefined, { signal });
    }
  }

  /**
   * Waits for a free connection; returns its release (idempotent). A request is timed by the
   * throttle only once it can go on the wire: one queued inside the pool would leave later,
   * together with others, above the ceiling.
   */
  async acquire(signal: AbortSignal): Promise<() => void> {
    while (this.#inFlight >= this.#connections) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.#waiting.indexOf(wake);
          if (i >= 0) this.#waiting.splice(i, 1);
          reject(signal.reason as Error);
        };
        this.#waiting.push(wake);
        signal.addEventListener("abort", onAbort, { once: true });
      });
    }
    this.#inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight--;
      this.#waiting.shift()?.();
    };
  }
}
