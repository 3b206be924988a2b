// The one reader of instants typed by a person (--from, --to, --until, --window): every day the
// calendar has is read as that day at 00:00 UTC, and every day it does not have is refused with
// the day named, never rolled over to another day. The calendar it is checked against is built
// here day by day from 1970-01-01 (its own leap rule), not from Date.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/util/errors.js";
import { parseInstant } from "../../../src/util/time.js";

const DAY_MS = 86_400_000;
const NOW = Date.UTC(2026, 10, 28);

/** Every real day from 1970 to 2099 as "YYYY-MM-DD" → epoch ms, counted one day at a time. */
function independentCalendar(): Map<string, number> {
  const lengths = (y: number) => [
    31,
    y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  const days = new Map<string, number>();
  let ms = 0;
  for (let y = 1970; y < 2100; y++)
    lengths(y).forEach((n, m) => {
      for (let d = 1; d <= n; d++) {
        const key = `${y}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
        days.set(key, ms);
        ms += DAY_MS;
      }
    });
  return days;
}

const calendar = independentCalendar();
const pad = (n: number) => String(n).padStart(2, "0");

describe("parseInstant", () => {
  it("reads every day the calendar has as that day, and refuses every other", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1970, max: 2099 }),
        fc.integer({ min: 0, max: 14 }),
        fc.integer({ min: 0, max: 33 }),
        (y, m, d) => {
          const text = `${y}-${pad(m)}-${pad(d)}`;
          const expected = calendar.get(text);
          if (expected !== undefined)
            expect(parseInstant(text, "--from", NOW)).toBe(expected);
          else
            expect(() => parseInstant(text, "--from", NOW)).toThrow(UsageError);
        },
      ),
      { seed: 41, numRuns: 5_000 },
    );
  });

  it("names the day that does not exist and the flag", () => {
    expect(() => parseInstant("2027-02-30", "--until", NOW)).toThrow(
      '--until "2027-02-30" is not a date: February 2027 has 28 days',
    );
    expect(() => parseInstant("2026-13-01", "--from", NOW)).toThrow(
      '--from "2026-13-01" is not a date: there is no month 13',
    );
    expect(() => parseInstant("2026-11-31", "--from", NOW)).toThrow(
      "November 2026 has 30 days",
    );
    expect(() => parseInstant("2028-02-29", "--from", NOW)).not.toThrow();
  });

  it("refuses a time of day no clock shows", () => {
    for (const [text, problem] of [
      ["2026-11-01T24:00:00Z", "there is no hour 24 in a day"],
      ["2026-11-01 10:60", "there is no minute 60 in an hour"],
      ["2026-11-01T10:00:60Z", "there is no second 60 in a minute"],
    ] as const)
      expect(() => parseInstant(text, "--to", NOW)).toThrow(problem);
  });

  it("reads any time of day a clock shows as that instant in UTC, and refuses any other", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 47_000 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 0, max: 65 }),
        fc.integer({ min: 0, max: 65 }),
        fc.constantFrom("T", " "),
        fc.constantFrom("", "Z"),
        (days, h, mi, s, sep, zone) => {
          const day = new Date(days * DAY_MS).toISOString().slice(0, 10);
          const text = `${day}${sep}${pad(h)}:${pad(mi)}:${pad(s)}${zone}`;
          if (h < 24 && mi < 60 && s < 60)
            expect(parseInstant(text, "--to", NOW)).toBe(
              days * DAY_MS + ((h * 60 + mi) * 60 + s) * 1000,
            );
          else
            expect(() => parseInstant(text, "--to", NOW)).toThrow(
              `--to "${text}" is not a date: there is no`,
            );
        },
      ),
      { seed: 41, numRuns: 500 },
    );
  });

  it("reads a date-time without a zone as UTC, whatever the machine's zone", () => {
    const machine = process.env.TZ;
    // Set and restored within this synchronous test: the unit files share one process.
    process.env.TZ = "America/New_York";
    try {
      expect(parseInstant("2026-07-01 10:00", "--from", NOW)).toBe(
        Date.UTC(2026, 6, 1, 10),
      );
      expect(parseInstant("2026-07-01T10:00:00", "--from", NOW)).toBe(
        Date.UTC(2026, 6, 1, 10),
      );
    } finally {
      if (machine === undefined) delete process.env.TZ;
      else process.env.TZ = machine;
    }
  });

  it("reads times, zones, Unix seconds, now and relative times", () => {
    expect(parseInstant("2026-11-01T10:00:00Z", "--from", NOW)).toBe(
      Date.UTC(2026, 10, 1, 10),
    );
    expect(parseInstant("2026-11-01 10:00", "--from", NOW)).toBe(
      Date.UTC(2026, 10, 1, 10),
    );
    expect(parseInstant("2026-11-01T12:00:00+02:00", "--from", NOW)).toBe(
      Date.UTC(2026, 10, 1, 10),
    );
    expect(parseInstant("1793491200", "--from", NOW)).toBe(1793491200_000);
    expect(parseInstant("now", "--from", NOW)).toBe(NOW);
    expect(parseInstant("-7d", "--from", NOW)).toBe(NOW - 7 * DAY_MS);
  });

  it("reads a month as its first instant, refusing one the calendar has not", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1970, max: 2099 }),
        fc.integer({ min: 0, max: 14 }),
        (y, m) => {
          const text = `${y}-${pad(m)}`;
          const first = calendar.get(`${text}-01`);
          if (first !== undefined)
            expect(parseInstant(text, "--from", NOW)).toBe(first);
          else
            expect(() => parseInstant(text, "--from", NOW)).toThrow(
              `--from "${text}" is not a month: there is no month ${m}`,
            );
        },
      ),
      { seed: 41, numRuns: 500 },
    );
  });

  it("reads an ISO week as its Monday: week 1 holds January 4, weeks follow each other, the last is 52 or 53", () => {
    // 1970-01-01 was a Thursday: weekday 0 is Monday in this count.
    const weekday = (ms: number) => (Math.floor(ms / DAY_MS) + 3) % 7;
    fc.assert(
      fc.property(fc.integer({ min: 1971, max: 2098 }), (y) => {
        const week = (w: number) =>
          parseInstant(`${y}-W${pad(w)}`, "--from", NOW);
        const jan4 = calendar.get(`${y}-01-04`) ?? NaN;
        const first = week(1);
        expect(weekday(first)).toBe(0);
        expect(jan4 - first).toBeGreaterThanOrEqual(0);
        expect(jan4 - first).toBeLessThan(7 * DAY_MS);
        // The year has as many weeks as Mondays before next year's week 1.
        const nextFirst =
          (calendar.get(`${y + 1}-01-04`) ?? NaN) -
          weekday(calendar.get(`${y + 1}-01-04`) ?? NaN) * DAY_MS;
        const weeks = (nextFirst - first) / (7 * DAY_MS);
        expect([52, 53]).toContain(weeks);
        expect(week(weeks)).toBe(first + (weeks - 1) * 7 * DAY_MS);
        expect(() => week(weeks + 1)).toThrow(
          `is not an ISO week: ${y} has weeks 1 to ${weeks}`,
        );
        expect(() => week(0)).toThrow(UsageError);
      }),
      { seed: 41, numRuns: 300 },
    );
    expect(parseInstant("2026-W44", "--from", NOW)).toBe(Date.UTC(2026, 9, 26));
  });
});
