// The range and checkpoint rule as pure decisions, against an in-memory ledger of window states:
// a checkpoint moves only over the leading windows that are settled (stored, shrunk, skipped),
// never past a pending, poisoned or unread one, never back; a window is poisoned after exactly
// `maxAttempts` failed fetches in a row, and a stored fetch settles it again.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkpointTarget,
  settledPrefixEnd,
} from "../../../src/pipeline/range.js";
import {
  nextWindowState,
  windowSettled,
  type WindowOutcome,
} from "../../../src/pipeline/window-ledger.js";
import type { Window } from "../../../src/sources/windows.js";
import type { WindowState } from "../../../src/warehouse/index.js";

const HOUR = 3_600_000;
const START = Date.UTC(2026, 10, 1);
const windowAt = (i: number): Window => ({
  startMs: START + i * HOUR,
  endMs: START + (i + 1) * HOUR,
});

/** One thing that happens to a planned window: a fetch's outcome, or an operator's skip. */
type Event =
  | { window: number; kind: "stored" | "shrunk" | "failed" }
  | { window: number; kind: "skip" };

interface Record {
  state: WindowState;
  attempts: number;
  endMs: number;
}

/** The ledger in memory: each event applied with the rule the real ledger applies. */
function apply(
  ledger: Map<number, Record>,
  e: Event,
  maxAttempts: number,
): void {
  const w = windowAt(e.window);
  if (e.kind === "skip") {
    ledger.set(w.startMs, { state: "skipped", attempts: 0, endMs: w.endMs });
    return;
  }
  const outcome: WindowOutcome =
    e.kind === "failed" ? { kind: "failed", error: "boom" } : { kind: e.kind };
  const next = nextWindowState(ledger.get(w.startMs), outcome, maxAttempts);
  ledger.set(w.startMs, { ...next, endMs: w.endMs });
}

const events = (windows: number) =>
  fc.array(
    fc.array(
      fc.record({
        window: fc.integer({ min: 0, max: windows - 1 }),
        kind: fc.constantFrom<Event["kind"]>(
          "stored",
          "shrunk",
          "failed",
          "failed",
          "skip",
        ),
      }),
      { maxLength: 4 },
    ),
    { maxLength: 12 },
  );

describe("the checkpoint rule", () => {
  it("for any sequence of window outcomes, moves only over settled windows, never back, and as far as they reach", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 10 })
          .chain((n) =>
            fc.tuple(
              fc.constant(n),
              fc.integer({ min: 0, max: n }),
              fc.integer({ min: 1, max: 4 }),
              events(n),
            ),
          ),
        ([n, ahead, maxAttempts, batches]) => {
          const planned = Array.from({ length: n }, (_, i) => windowAt(i));
          const ledger = new Map<number, Record>();
          const settled = (w: Window) =>
            windowSettled(ledger.get(w.startMs), w);
          // An incremental sync re-reads windows behind its checkpoint: it may start ahead.
          let positionMs = START + ahead * HOUR;
          let count = 0;
          for (const batch of batches) {
            for (const e of batch) apply(ledger, e, maxAttempts);
            const end = settledPrefixEnd(planned, count, settled);
            expect(end).toBeGreaterThanOrEqual(count);
            for (let i = count; i < end; i++)
              expect(settled(planned[i] as Window)).toBe(true);
            // It stops at the first window that is not settled.
            if (end < n) expect(settled(planned[end] as Window)).toBe(false);
            const target =
              end > count
                ? checkpointTarget(positionMs, planned[end - 1] as Window)
                : undefined;
            count = end;
            if (target === undefined) continue;
            expect(target).toBeGreaterThan(positionMs);
            // Every window the checkpoint now covers is settled, or lay behind it already.
            for (const w of planned)
              if (w.endMs <= target && w.endMs > positionMs)
                expect(settled(w), `window ${w.startMs}`).toBe(true);
            positionMs = target;
          }
          // However the run ended, the checkpoint stands at the end of the settled prefix, or
          // where it stood before the run when that lies further.
          const prefixEndMs = count === 0 ? START : windowAt(count - 1).endMs;
          expect(positionMs).toBe(Math.max(START + ahead * HOUR, prefixEndMs));
        },
      ),
      { seed: 5, numRuns: 300 },
    );
  });

  it("stops at a window never fetched, pending or poisoned, however many settled ones follow", () => {
    const planned = [0, 1, 2, 3].map(windowAt);
    for (const hole of [undefined, "pending", "poisoned"] as const) {
      const states = new Map<number, Record>(
        planned.map((w, i) => [
          w.startMs,
          {
            state: i === 1 ? (hole ?? "stored") : "stored",
            attempts: 0,
            endMs: w.endMs,
          },
        ]),
      );
      if (hole === undefined) states.delete(planned[1]?.startMs ?? 0);
      const end = settledPrefixEnd(planned, 0, (w) =>
        windowSettled(states.get(w.startMs), w),
      );
      expect(end, String(hole)).toBe(1);
    }
  });

  it("never moves a checkpoint back, nor onto where it stands", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 0, max: 1_000 }),
        (position, end) => {
          const target = checkpointTarget(position * HOUR, {
            startMs: (end - 1) * HOUR,
            endMs: end * HOUR,
          });
          expect(target).toBe(end > position ? end * HOUR : undefined);
        },
      ),
      { seed: 6, numRuns: 200 },
    );
  });
});

describe("a window's state", () => {
  it("is settled only when stored, shrunk or skipped and covering all of the window", () => {
    const w = windowAt(0);
    const settledStates = ["stored", "shrunk", "skipped"];
    for (const state of [
      "stored",
      "shrunk",
      "skipped",
      "pending",
      "poisoned",
    ] as const) {
      expect(windowSettled({ state, endMs: w.endMs }, w), state).toBe(
        settledStates.includes(state),
      );
      // A record of a shorter window (the window grew) does not settle the longer one.
      expect(windowSettled({ state, endMs: w.endMs - 1 }, w), state).toBe(
        false,
      );
    }
    expect(windowSettled(undefined, w)).toBe(false);
  });

  it("is poisoned after exactly maxAttempts failures in a row; a stored fetch starts the count again", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(
          fc.constantFrom("stored", "shrunk", "failed", "failed", "failed"),
          {
            maxLength: 15,
          },
        ),
        (maxAttempts, outcomes) => {
          let record: { state: WindowState; attempts: number } | undefined;
          let inARow = 0;
          for (const kind of outcomes) {
            const outcome: WindowOutcome =
              kind === "failed" ? { kind, error: "e" } : { kind };
            record = nextWindowState(record, outcome, maxAttempts);
            inARow = kind === "failed" ? inARow + 1 : 0;
            expect(record.attempts).toBe(inARow);
            expect(record.state).toBe(
              kind !== "failed"
                ? kind
                : inARow >= maxAttempts
                  ? "poisoned"
                  : "pending",
            );
          }
        },
      ),
      { seed: 8, numRuns: 300 },
    );
  });

  it("counts a failure after an operator's skip as the first", () => {
    const next = nextWindowState(
      { state: "skipped", attempts: 0 },
      { kind: "failed", error: "e" },
      3,
    );
    expect(next).toEqual({ state: "pending", attempts: 1, lastError: "e" });
  });
});
