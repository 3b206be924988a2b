// What of a report's period a stream's checkpoints say is complete: the scheduled stream's from
// where its first sync started, each backfill's over its range up to its position (an
// interrupted one over its first part), each listed with what says so, the rest as missing.
import { describe, expect, it } from "vitest";
import { backfillStream } from "../../../src/pipeline/names.js";
import { streamCoverage } from "../../../src/reports/coverage.js";

const ms = (day: number) => Date.UTC(2026, 10, day);
const at = (day: number) => `2026-11-${String(day).padStart(2, "0")} 00:00:00`;
const period = (from: number, to: number) => ({
  from: new Date(ms(from)).toISOString(),
  to: new Date(ms(to)).toISOString(),
});
const backfill = (from: number, to: number, position: number) => ({
  stream: backfillStream("sessions", ms(from), ms(to)),
  position: at(position),
});

describe("streamCoverage", () => {
  it("merges overlapping backfills and the scheduled stream, and lists what none covers", () => {
    const c = streamCoverage(
      "sessions",
      [
        backfill(1, 5, 5),
        backfill(3, 8, 8),
        // Interrupted on the 11th: covers the 10th only.
        backfill(10, 14, 11),
        { stream: "sessions", position: at(20), coversFrom: at(13) },
        // Another stream's backfill counts nothing here.
        {
          stream: backfillStream("aggregations.x", ms(8), ms(10)),
          position: at(10),
        },
      ],
      period(2, 18),
    );
    expect(c.missing).toEqual([
      { from: at(8), to: at(10) },
      { from: at(11), to: at(13) },
    ]);
    expect(c.known.map((k) => [k.from, k.to])).toEqual([
      [at(2), at(5)],
      [at(3), at(8)],
      [at(10), at(11)],
      [at(13), at(18)],
    ]);
    expect(c).toMatchObject({ checkpoint: at(20), complete: false });
  });

  it("a scheduled checkpoint that does not say where it started covers everything before it", () => {
    const c = streamCoverage(
      "sessions",
      [{ stream: "sessions", position: at(20), coversFrom: "" }],
      period(2, 18),
    );
    expect(c).toMatchObject({ missing: [], complete: true });
  });

  it("nothing covers a period without a checkpoint, or before a backfill starts", () => {
    expect(streamCoverage("sessions", [], period(2, 4)).missing).toEqual([
      { from: at(2), to: at(4) },
    ]);
    expect(
      streamCoverage("sessions", [backfill(5, 8, 8)], period(2, 4)).missing,
    ).toEqual([{ from: at(2), to: at(4) }]);
  });
});
