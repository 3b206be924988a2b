// The scan reads a record's times in place and remembers the last day it read: a run of records
// on the same day, then on other days, valid and not, must each get the time Date.parse gives,
// and a day no calendar has must never be taken for the day read before it.
import { describe, expect, it } from "vitest";
import { scanSession } from "../../../src/api/schemas/session-scan.js";

const scanStart = (startTime: string): number | undefined => {
  const scan = scanSession(
    Buffer.from(
      JSON.stringify({ id: "ses_1", startTime, sessionStatus: "active" }),
    ),
  );
  return scan === undefined || "ambiguous" in scan ? undefined : scan.startMs;
};

describe("the scan's start times", () => {
  it("equal Date.parse across records that share and change days", () => {
    const times = [
      "2026-11-06T00:00:00Z",
      "2026-11-06T23:59:59.999Z",
      "2026-11-06T12:30:00.1Z",
      "2026-11-06T12:30:00.12Z",
      "2026-11-06T12:30:00.123456789Z",
      "2026-11-06T12:30:00+02:00",
      "2026-11-06t12:30:00-05:30",
      "2026-11-07T00:00:00z",
      "2024-02-29T08:00:00Z",
      "2026-11-06T01:02:03.004Z",
      "1999-12-31T23:59:59Z",
    ];
    // Each time after every other one, so each is read both as a new day and as the last day.
    for (const before of times)
      for (const t of times) {
        scanStart(before);
        expect(scanStart(t), `${t} after ${before}`).toBe(Date.parse(t));
      }
  });

  it("leave a day or time no calendar has to the schema, whatever day was read before", () => {
    const impossible = [
      "2026-02-29T08:00:00Z",
      "2026-11-31T08:00:00Z",
      "2026-13-06T08:00:00Z",
      "2026-11-06T24:00:00Z",
      "2026-11-06T12:60:00Z",
      "2026-11-06T12:30:60Z",
      "2026-11-0xT12:30:00Z",
      "0999-11-06T12:30:00Z",
      "2026-11-06T12:30:00.Z",
      "2026-11-06T12:30:00.1234567890Z",
      "2026-11-06T12:30:00+24:00",
      "2026-11-06 12:30:00Z",
    ];
    for (const valid of ["2026-11-06T00:00:00Z", "2026-02-28T00:00:00Z"])
      for (const t of impossible) {
        expect(scanStart(valid)).toBe(Date.parse(valid));
        expect(scanStart(t), `${t} after ${valid}`).toBeUndefined();
      }
  });
});
