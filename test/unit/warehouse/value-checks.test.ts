// What the session row writer refuses before a row is built: values a DateTime64 column or a
// calendar cannot hold, negative or impossible durations, an end before the start. Each is a
// reason that names the field and the value; nothing is clamped.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanSession } from "../../../src/api/schemas/session-scan.js";
import {
  parseSession,
  type Session,
} from "../../../src/api/schemas/session.js";
import {
  sessionTimesFit,
  sessionValueProblem,
} from "../../../src/warehouse/session-rows.js";

const FETCHED = Date.UTC(2026, 10, 16, 12, 0, 0);

function session(members: Record<string, unknown>): Session {
  const parsed = parseSession({
    id: "ses_1",
    startTime: "2026-11-16T10:00:00.123Z",
    sessionStatus: "completed",
    endTime: "2026-11-16T10:30:00Z",
    duration: "1799.877s",
    ...members,
  });
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data;
}

const problem = (members: Record<string, unknown>) =>
  sessionValueProblem(session(members), FETCHED);

describe("session value checks", () => {
  it("accepts real instants at every precision and offset, and the edges of the range", () => {
    expect(problem({})).toBeUndefined();
    expect(
      problem({ startTime: "2026-11-16T11:00:00.123456789+01:00" }),
    ).toBeUndefined();
    expect(
      problem({
        startTime: "2024-02-29T00:00:00Z",
        endTime: undefined,
        duration: undefined,
        sessionStatus: "active",
      }),
    ).toBeUndefined();
    expect(
      problem({ endTime: "2299-12-31T23:59:59.999Z", duration: "0s" }),
    ).toBeUndefined();
  });

  it("names impossible calendar dates and times of day, which Date.parse would move to the next month", () => {
    expect(problem({ startTime: "2026-02-30T10:00:00Z" })).toBe(
      'startTime: "2026-02-30T10:00:00Z" is not a valid date and time (February 2026 has 28 days)',
    );
    expect(problem({ startTime: "2025-02-29T10:00:00Z" })).toMatch(
      /^startTime: .*February 2025 has 28 days/,
    );
    expect(problem({ startTime: "2026-04-31T10:00:00Z" })).toMatch(
      /^startTime: .*April 2026 has 30 days/,
    );
    expect(problem({ startTime: "2026-11-16T24:00:00Z" })).toBe(
      'startTime: "2026-11-16T24:00:00Z" is not a valid date and time (there is no hour 24 in a day)',
    );
    expect(problem({ endTime: "2026-11-31T10:30:00Z" })).toMatch(
      /^endTime: .*is not a valid date and time \(November 2026 has 30 days\)/,
    );
  });

  it("names instants outside what a DateTime64 holds, and starts no session can have", () => {
    expect(problem({ startTime: "1800-11-16T10:00:00Z" })).toMatch(
      /^startTime: "1800-11-16T10:00:00Z" is out of range \(a DateTime64 holds 1900-01-01 to 2299-12-31 UTC\)$/,
    );
    expect(problem({ endTime: "2400-11-16T10:30:00Z" })).toMatch(
      /^endTime: .*out of range.*2299/,
    );
    expect(problem({ startTime: "1999-12-31T23:59:59Z" })).toMatch(
      /^startTime: .*out of range \(a session starts after 2000-01-01/,
    );
    expect(
      problem({
        startTime: "2026-11-18T10:00:00Z",
        endTime: undefined,
        duration: undefined,
      }),
    ).toMatch(
      /^startTime: .*at most a day after it was read, 2026-11-16T12:00:00.000Z\)$/,
    );
  });

  it("names negative and impossible durations, and an end before the start", () => {
    expect(problem({ duration: "-12.5s" })).toBe(
      'duration: "-12.5s" is negative',
    );
    expect(problem({ duration: "99999999999999s" })).toMatch(
      /^duration: .*longer than any session can last/,
    );
    expect(problem({ endTime: "2026-11-16T09:00:00Z" })).toBe(
      'endTime: "2026-11-16T09:00:00Z" is before startTime "2026-11-16T10:00:00.123Z"',
    );
  });

  it("judges the times the scan read as sessionValueProblem does, at the edges of every limit", () => {
    const DAY = 86_400_000;
    // Instants on and around every limit: the earliest start, a day after the fetch, the
    // last instant a DateTime64 holds, and an end just before or after the start.
    const edges = [
      Date.UTC(2000, 0, 1),
      FETCHED + DAY,
      Date.UTC(2300, 0, 1) - 1,
      Date.UTC(1900, 0, 1),
      FETCHED,
    ];
    const instant = fc.oneof(
      fc
        .tuple(fc.constantFrom(...edges), fc.integer({ min: -2, max: 2 }))
        .map(([edge, d]) => edge + d),
      fc.integer({ min: Date.UTC(1901, 0, 1), max: Date.UTC(2299, 0, 1) }),
    );
    /** The instant as RFC 3339, at a random offset and precision. */
    const text = (ms: number, offsetMin: number, digits: number) => {
      const local = new Date(ms + offsetMin * 60_000).toISOString();
      const [whole = "", fraction = ""] = local.slice(0, -1).split(".");
      const zone =
        offsetMin === 0
          ? "Z"
          : `${offsetMin < 0 ? "-" : "+"}${String(Math.floor(Math.abs(offsetMin) / 60)).padStart(2, "0")}:${String(Math.abs(offsetMin) % 60).padStart(2, "0")}`;
      return `${whole}${digits === 0 ? "" : `.${`${fraction}000000`.slice(0, digits)}`}${zone}`;
    };
    const time = fc
      .tuple(
        instant,
        fc.constantFrom(0, 0, 60, -90, 330, -600),
        fc.constantFrom(0, 3, 6, 9),
      )
      .map(([ms, off, digits]) => text(ms, off, digits));
    let fit = 0;
    let unfit = 0;
    fc.assert(
      fc.property(
        time,
        fc.option(
          fc.oneof(
            time,
            instant.map((ms) => text(ms, 0, 3)),
          ),
        ),
        (startTime, endTime) => {
          const record = {
            id: "ses_1",
            startTime,
            ...(endTime === null
              ? { sessionStatus: "active" }
              : { endTime, sessionStatus: "completed" }),
          };
          const scan = scanSession(Buffer.from(JSON.stringify(record)));
          const parsed = parseSession(record);
          if (scan === undefined || "ambiguous" in scan || !parsed.success)
            return;
          const fits = sessionTimesFit(scan.startMs, scan.endMs, FETCHED);
          expect(fits, JSON.stringify(record)).toBe(
            sessionValueProblem(parsed.data, FETCHED) === undefined,
          );
          if (fits) fit++;
          else unfit++;
        },
      ),
      { numRuns: 4000, seed: 11 },
    );
    // Both answers were seen many times.
    expect(fit).toBeGreaterThan(300);
    expect(unfit).toBeGreaterThan(300);
  });
});
