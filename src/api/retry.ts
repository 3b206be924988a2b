// Whether a failed attempt gets another try, and after how long: a pure decision over the
// failure's verdict (errors.ts classifyFailure), the per-request limit, the server's own wait
// and the run's budget. The client acts on it (waits, pauses its pacing, logs).
import { backoffMs } from "../util/backoff.js";
import { ApiError, classifyFailure, isConnectFailure } from "./errors.js";
import { MAX_SERVER_WAIT_MS } from "./pacing.js";

export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * A person waits on the command (sync, demo, detect, doctor): a connection that cannot be made
   * at all (refused, unknown host) gets one short retry, then fails with one message, instead of
   * every retry of the policy. The service (`run`) keeps retrying it. Default false.
   */
  personWaits?: boolean;
}

/** The one retry a person waiting on a command gets for a connection that could not be made. */
const PERSON_RETRY_MS = 500;

/**
 * Milliseconds before the next try of attempt `attempt` (0 for the first) that failed with
 * `err`; throws the final error when there is none: not an ApiError, not retryable, the
 * per-request limit reached, a server's wait past MAX_SERVER_WAIT_MS, or the run's budget
 * spent. A refusal of the caller is recorded in the budget first, so the run asks no more.
 */
export function retryWaitMs(
  err: unknown,
  attempt: number,
  policy: RetryPolicy,
  budget: RetryBudget | undefined,
): number {
  if (!(err instanceof ApiError)) throw err;
  const verdict = classifyFailure(err);
  if (verdict === "refused") budget?.refuse(err);
  if (verdict !== "retry") throw err;
  const tries = `${attempt + 1} ${attempt === 0 ? "try" : "tries"}`;
  if (policy.personWaits && isConnectFailure(err)) {
    if (attempt >= 1 || policy.maxRetries === 0)
      throw err.gaveUp(
        `gave up after ${tries}: nothing answers there`,
        "check SESSIONHOUSE_API_URL (host and port) and that the control plane is reachable from here; `sessionhouse run` keeps retrying such failures, a command gives up at once",
      );
    return Math.min(PERSON_RETRY_MS, policy.retryBaseMs);
  }
  if (attempt >= policy.maxRetries) {
    throw err.gaveUp(
      `gave up after ${tries}: at most ${policy.maxRetries} retries per request`,
    );
  }
  const serverWait = err.retryAfterMs;
  if (serverWait !== undefined && serverWait > MAX_SERVER_WAIT_MS) {
    throw err.gaveUp(
      `the service asked to wait ${Math.ceil(serverWait / 1000)} s before another try, more than ${MAX_SERVER_WAIT_MS / 1000} s`,
      "the API asks the exporter to pause for long: the next run resumes from the checkpoint; lower SESSIONHOUSE_MAX_RPS if this recurs",
    );
  }
  if (budget && !budget.take()) {
    throw err.gaveUp(
      `gave up after ${tries}: the run's retry budget of ${budget.total} retries is spent`,
      "the API failed too often in this run; the next run resumes from the checkpoint. If it keeps happening, check the API's health or lower SESSIONHOUSE_MAX_RPS",
    );
  }
  return backoffMs(
    attempt,
    { baseMs: policy.retryBaseMs, maxMs: policy.retryMaxMs },
    serverWait,
  );
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
