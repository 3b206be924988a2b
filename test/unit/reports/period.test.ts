// Report periods over any instant: the previous day, ISO week and month are whole calendar
// periods in UTC that end at or before the instant and start where the one holding it starts
// the next; each is what `--from` reads for the same day, week or month; a period not begun
// is refused, and one not ended is noted.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { futureNotices, previousPeriod } from "../../../src/reports/period.js";
import { UsageError } from "../../../src/util/errors.js";
import { parseInstant } from "../../../src/util/time.js";

const DAY = 86_400_000;
const instant = fc.integer({
  min: Date.UTC(2001, 0, 1),
  max: Date.UTC(2099, 11, 31, 23, 59, 59, 999),
});
const pad = (n: number) => String(n).padStart(2, "0");

describe("previousPeriod", () => {
  it("is the whole day, ISO week or month before the one holding the instant", () => {
    fc.assert(
      fc.property(instant, (now) => {
        const day = previousPeriod("previous-day", now);
        expect(day.toMs - day.fromMs).toBe(DAY);
        expect(day.toMs % DAY).toBe(0);
        expect(now - day.toMs).toBeGreaterThanOrEqual(0);
        expect(now - day.toMs).toBeLessThan(DAY);

        const week = previousPeriod("previous-week", now);
        expect(week.toMs - week.fromMs).toBe(7 * DAY);
        expect(new Date(week.fromMs).getUTCDay()).toBe(1);
        expect(now - week.toMs).toBeGreaterThanOrEqual(0);
        expect(now - week.toMs).toBeLessThan(7 * DAY);

        const month = previousPeriod("previous-month", now);
        const from = new Date(month.fromMs);
        const to = new Date(month.toMs);
        const held = new Date(now);
        expect(to.getUTCFullYear() * 12 + to.getUTCMonth()).toBe(
          held.getUTCFullYear() * 12 + held.getUTCMonth(),
        );
        expect(to.getUTCFullYear() * 12 + to.getUTCMonth()).toBe(
          from.getUTCFullYear() * 12 + from.getUTCMonth() + 1,
        );
        // The month as --from reads it is the same instant.
        const text = `${from.getUTCFullYear()}-${pad(from.getUTCMonth() + 1)}`;
        expect(parseInstant(text, "--from", now)).toBe(month.fromMs);
        expect(parseInstant(to.toISOString().slice(0, 7), "--to", now)).toBe(
          month.toMs,
        );
        expect(
          parseInstant(from.toISOString().slice(0, 10), "--from", now),
        ).toBe(month.fromMs);
      }),
      { seed: 31, numRuns: 300 },
    );
  });
});

describe("futureNotices", () => {
  it("refuses a period not begun, notes one not ended, and says nothing of one that has", () => {
    fc.assert(
      fc.property(
        instant,
        fc.integer({ min: 1, max: 60 * DAY }),
        fc.integer({ min: -90 * DAY, max: 90 * DAY }),
        (fromMs, length, offset) => {
          const period = { fromMs, toMs: fromMs + length };
          const now = fromMs + offset;
          if (now <= fromMs) {
            expect(() => futureNotices(period, now)).toThrow(UsageError);
            return;
          }
          const notices = futureNotices(period, now);
          expect(notices.length).toBe(period.toMs > now ? 1 : 0);
        },
      ),
      { seed: 32, numRuns: 300 },
    );
  });
});
