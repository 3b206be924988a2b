// The retry rules over their whole input space: the backoff ceiling doubles up to its cap and
// never shrinks, a drawn wait stays below it unless the server asked for longer; over any run of
// failures a request is retried at most `maxRetries` times and the run at most its budget, a
// failure that is not retried gets no wait, and Retry-After is read in seconds or as a date.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONNECT_CODES } from "../../../src/api/connect-codes.js";
import {
  ApiError,
  classifyFailure,
  type ApiErrorInit,
} from "../../../src/api/errors.js";
import { MAX_SERVER_WAIT_MS, serverWaitMs } from "../../../src/api/pacing.js";
import {
  RetryBudget,
  retryWaitMs,
  type RetryPolicy,
} from "../../../src/api/retry.js";
import { backoffCeilingMs, backoffMs } from "../../../src/util/backoff.js";

const failure = (code: ApiErrorInit["code"], retryAfterMs?: number) =>
  new ApiError({
    code,
    httpStatus: 0,
    procedure: "S/M",
    message: "m",
    retryAfterMs,
  });

const options = fc.record({
  baseMs: fc.integer({ min: 1, max: 5_000 }),
  maxMs: fc.integer({ min: 1, max: 120_000 }),
});

describe("backoff", () => {
  it("has a ceiling that doubles from baseMs, never shrinks and never passes maxMs", () => {
    fc.assert(
      fc.property(options, ({ baseMs, maxMs }) => {
        const attempts = Array.from({ length: 40 }, (_, a) => a);
        const ceilings = attempts.map((a) =>
          backoffCeilingMs(a, { baseMs, maxMs }),
        );
        expect(ceilings).toEqual(
          attempts.map((a) => Math.min(maxMs, baseMs * 2 ** a)),
        );
        expect(
          ceilings.every((c, a) => a === 0 || c >= (ceilings[a - 1] ?? 0)),
        ).toBe(true);
        expect(Math.max(...ceilings)).toBeLessThanOrEqual(maxMs);
      }),
      { seed: 3, numRuns: 200 },
    );
  });

  it("draws a wait below the ceiling, at least what the server asked", () => {
    fc.assert(
      fc.property(
        options,
        fc.integer({ min: 0, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: MAX_SERVER_WAIT_MS }), {
          nil: undefined,
        }),
        (opts, attempt, draw, serverWait) => {
          const wait = backoffMs(
            attempt,
            { ...opts, random: () => draw },
            serverWait,
          );
          const ceiling = backoffCeilingMs(attempt, opts);
          expect(Number.isInteger(wait)).toBe(true);
          expect(wait).toBeGreaterThanOrEqual(0);
          if (serverWait === undefined) expect(wait).toBeLessThan(ceiling);
          else {
            expect(wait).toBeGreaterThanOrEqual(serverWait);
            expect(wait).toBeLessThanOrEqual(Math.max(serverWait, ceiling));
          }
        },
      ),
      { seed: 4, numRuns: 300 },
    );
  });
});

const RETRIED = CONNECT_CODES.filter(
  (c) => classifyFailure(failure(c)) === "retry",
);
const NOT_RETRIED = CONNECT_CODES.filter((c) => !RETRIED.includes(c));

describe("retryWaitMs over a run", () => {
  it("retries a request at most maxRetries times and the run at most its budget, waiting within the cap", () => {
    fc.assert(
      fc.property(
        fc.record({
          maxRetries: fc.integer({ min: 0, max: 6 }),
          retryBaseMs: fc.integer({ min: 1, max: 1_000 }),
          retryMaxMs: fc.integer({ min: 1, max: 30_000 }),
        }),
        fc.integer({ min: 0, max: 15 }),
        // Each request: the failures it meets in a row before it is answered.
        fc.array(
          fc.array(
            fc.record({
              code: fc.constantFrom(...RETRIED),
              serverWait: fc.option(
                fc.integer({ min: 0, max: 2 * MAX_SERVER_WAIT_MS }),
                { nil: undefined, freq: 3 },
              ),
            }),
            { maxLength: 8 },
          ),
          { maxLength: 8 },
        ),
        (policy: RetryPolicy, total, requests) => {
          const budget = new RetryBudget(total);
          let waits = 0;
          for (const failures of requests) {
            for (const [attempt, f] of failures.entries()) {
              const err = failure(f.code, f.serverWait);
              let wait: number;
              try {
                wait = retryWaitMs(err, attempt, policy, budget);
              } catch (thrown) {
                // It gives up only for a reason of the rule's, naming the same failure.
                expect(thrown).toBeInstanceOf(ApiError);
                expect((thrown as ApiError).code).toBe(f.code);
                expect(
                  attempt >= policy.maxRetries ||
                    (f.serverWait ?? 0) > MAX_SERVER_WAIT_MS ||
                    waits >= total,
                ).toBe(true);
                break;
              }
              waits++;
              expect(attempt).toBeLessThan(policy.maxRetries);
              expect(f.serverWait ?? 0).toBeLessThanOrEqual(MAX_SERVER_WAIT_MS);
              expect(wait).toBeLessThanOrEqual(
                Math.max(policy.retryMaxMs, f.serverWait ?? 0),
              );
              if (f.serverWait !== undefined)
                expect(wait).toBeGreaterThanOrEqual(f.serverWait);
            }
          }
          expect(waits).toBeLessThanOrEqual(total);
          expect(budget.spent).toBe(waits);
        },
      ),
      { seed: 9, numRuns: 200 },
    );
  });

  it("gives no wait to a failure that is not retried, whatever the attempt and budget", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...NOT_RETRIED),
        fc.integer({ min: 0, max: 5 }),
        (code, attempt) => {
          const budget = new RetryBudget(100);
          const err = failure(code);
          expect(() =>
            retryWaitMs(
              err,
              attempt,
              { maxRetries: 10, retryBaseMs: 10, retryMaxMs: 100 },
              budget,
            ),
          ).toThrow(err);
          expect(budget.spent).toBe(0);
        },
      ),
      { seed: 10, numRuns: 100 },
    );
  });

  it("reads Retry-After in seconds, fractional or whole, and as an HTTP date", () => {
    const now = Date.UTC(2026, 10, 1, 12);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400 }), (seconds) => {
        expect(serverWaitMs({ "retry-after": String(seconds) }, now)).toBe(
          seconds * 1000,
        );
        expect(serverWaitMs({ "retry-after": `${seconds}.5` }, now)).toBe(
          seconds * 1000 + 500,
        );
        const date = new Date(now + seconds * 1000).toUTCString();
        expect(serverWaitMs({ "retry-after": date }, now)).toBe(seconds * 1000);
        // A date in the past means now, never a negative wait.
        const past = new Date(now - (seconds + 1) * 1000).toUTCString();
        expect(serverWaitMs({ "retry-after": past }, now)).toBe(0);
      }),
      { seed: 12, numRuns: 200 },
    );
  });
});
