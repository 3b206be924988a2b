// Windows side by side, finished in order: whatever order the work completes in, `done` sees a
// contiguous prefix in window order, never more than `concurrency` windows are worked on at
// once, and after a failure nothing starts and nothing passes the failed window.
import { setImmediate as turn } from "node:timers/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forEachWindowInOrder } from "../../../src/pipeline/window-pool.js";

/**
 * Waits `n` turns of the event loop: windows that wait different numbers of turns finish in
 * another order than they started, as timers would make them, without the milliseconds.
 */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

describe("forEachWindowInOrder", () => {
  it("finishes windows in order with at most `concurrency` at once, whatever the timing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 }), {
          minLength: 0,
          maxLength: 25,
        }),
        fc.integer({ min: 1, max: 6 }),
        async (delays, concurrency) => {
          let running = 0;
          let peak = 0;
          const started: number[] = [];
          const done: number[] = [];
          await forEachWindowInOrder(
            delays.map((_, i) => i),
            { concurrency },
            async (i) => {
              started.push(i);
              peak = Math.max(peak, ++running);
              await turns(delays[i] as number);
              running--;
              return i * 10;
            },
            async (i, result) => {
              expect(result).toBe(i * 10);
              done.push(i);
              await turns(1);
            },
          );
          expect(started).toEqual(delays.map((_, i) => i));
          expect(done).toEqual(delays.map((_, i) => i));
          expect(peak).toBeLessThanOrEqual(concurrency);
        },
      ),
      { numRuns: 60, seed: 7 },
    );
  });

  it("after a window fails: no new window starts, `done` stops before it, the failure is thrown", async () => {
    const events: string[] = [];
    const done: number[] = [];
    const err = await forEachWindowInOrder(
      Array.from({ length: 40 }, (_, i) => i),
      { concurrency: 3 },
      async (i) => {
        events.push(`start ${i}`);
        // Window 1 is slow; window 3 fails while 1 still runs and later windows come and go.
        await turns(i === 1 ? 40 : i === 3 ? 10 : 1);
        if (i === 3) {
          events.push("fail 3");
          throw new Error("window 3 broke");
        }
        return i;
      },
      (i) => {
        done.push(i);
        return Promise.resolve();
      },
    ).catch((e: unknown) => e as Error);
    expect((err as Error).message).toBe("window 3 broke");
    // 0, 1 and 2 finish (1 after the failure) and form the prefix; nothing at or after 3.
    expect(done).toEqual([0, 1, 2]);
    const failedAt = events.indexOf("fail 3");
    expect(failedAt).toBeGreaterThan(0);
    expect(
      events.slice(failedAt + 1).filter((e) => e.startsWith("start")),
    ).toEqual([]);
    expect(events.filter((e) => e.startsWith("start")).length).toBeLessThan(40);
  });

  it("stops when `done` fails (a checkpoint that cannot be written)", async () => {
    const done: number[] = [];
    const err = await forEachWindowInOrder(
      [0, 1, 2, 3, 4],
      { concurrency: 2 },
      (i) => Promise.resolve(i),
      (i) => {
        if (i === 2)
          return Promise.reject(new Error("checkpoint write failed"));
        done.push(i);
        return Promise.resolve();
      },
    ).catch((e: unknown) => e as Error);
    expect((err as Error).message).toBe("checkpoint write failed");
    expect(done).toEqual([0, 1]);
  });

  it("holds at most `maxAhead` windows beyond those passed to `done`, behind a slow window", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 6 }), {
          minLength: 1,
          maxLength: 25,
        }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        async (delays, concurrency, maxAhead) => {
          let started = 0;
          let passed = 0;
          let peakAhead = 0;
          const done: number[] = [];
          await forEachWindowInOrder(
            delays.map((_, i) => i),
            { concurrency, maxAhead },
            async (i) => {
              started++;
              peakAhead = Math.max(peakAhead, started - passed);
              await turns(delays[i] as number);
              return i;
            },
            async (i) => {
              done.push(i);
              passed++;
              await turns(1);
            },
          );
          expect(done).toEqual(delays.map((_, i) => i));
          expect(peakAhead).toBeLessThanOrEqual(maxAhead);
        },
      ),
      { numRuns: 60, seed: 11 },
    );
  });
});
