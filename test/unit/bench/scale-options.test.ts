// The scale bench's load window: BENCH_SCALE_MONTH and BENCH_SCALE_DAYS read into the start
// times loaded, and which of the dashboards' ranges they cover.
import { describe, expect, it } from "vitest";
import {
  BenchInputError,
  loadWindow,
  rangesAsked,
  scaleParts,
  scaleShape,
  windowCovers,
} from "../../../bench/scale-options.js";

const DAY = 86_400_000;
const END = Date.UTC(2026, 10, 16);

describe("the scale bench's load window", () => {
  it("is the whole year when neither option is set", () => {
    expect(loadWindow({}, END)).toBeUndefined();
    expect(windowCovers(undefined, END, 365)).toBe(true);
  });

  it("BENCH_SCALE_DAYS=30 is the 30 days before the year's end, covering 24 h and 30 d but not 365 d", () => {
    const w = loadWindow({ BENCH_SCALE_DAYS: "30" }, END);
    expect(w).toMatchObject({
      fromMs: Date.UTC(2026, 9, 17),
      toMs: END,
      days: 30,
      label: "only the last 30 days loaded",
    });
    expect(w?.month).toBeUndefined();
    expect([1, 30, 365].map((d) => windowCovers(w, END, d))).toEqual([
      true,
      true,
      false,
    ]);
    expect(
      windowCovers(loadWindow({ BENCH_SCALE_DAYS: "29" }, END), END, 30),
    ).toBe(false);
  });

  it("BENCH_SCALE_MONTH is that calendar month, which ends before the year does: no range covered", () => {
    const w = loadWindow({ BENCH_SCALE_MONTH: "2026-10" }, END);
    expect(w).toMatchObject({
      fromMs: Date.UTC(2026, 9, 1),
      toMs: Date.UTC(2026, 10, 1),
      month: "2026-10",
    });
    expect(windowCovers(w, END, 1)).toBe(false);
  });

  it("refuses a count of days that is not a whole number from 1 to 365, and both options at once", () => {
    for (const bad of ["0", "366", "2.5", "-3", "a week", ""])
      expect(() => loadWindow({ BENCH_SCALE_DAYS: bad }, END)).toThrow(
        /BENCH_SCALE_DAYS=.*whole number of days from 1 to 365/,
      );
    expect(() =>
      loadWindow({ BENCH_SCALE_DAYS: "30", BENCH_SCALE_MONTH: "2026-10" }, END),
    ).toThrow(/both set/);
    expect(loadWindow({ BENCH_SCALE_DAYS: "365" }, END)?.fromMs).toBe(
      END - 365 * DAY,
    );
  });
});

describe("BENCH_SCALE_RANGES", () => {
  it("is every range by default, or the ones listed", () => {
    expect([...rangesAsked({})]).toEqual(["24h", "30d", "365d"]);
    expect([...rangesAsked({ BENCH_SCALE_RANGES: "365d" })]).toEqual(["365d"]);
    expect([...rangesAsked({ BENCH_SCALE_RANGES: "24 h, 30d" })]).toEqual([
      "24h",
      "30d",
    ]);
  });

  it("names a range it does not know and the ones it does", () => {
    expect(() => rangesAsked({ BENCH_SCALE_RANGES: "7d" })).toThrow(
      /"7d" is not a range; give a comma list of 24h, 30d and 365d/,
    );
  });
});

describe("BENCH_SCALE_PARTS", () => {
  it("is the four parts by default, or the ones listed", () => {
    expect([...scaleParts({})]).toEqual([
      "sample",
      "dashboards",
      "archive",
      "reports",
    ]);
    expect([...scaleParts({ BENCH_SCALE_PARTS: "dashboards, none" })]).toEqual([
      "dashboards",
      "none",
    ]);
  });

  it("refuses a part it does not know, the nearest first", () => {
    expect(() => scaleParts({ BENCH_SCALE_PARTS: "dashboard" })).toThrow(
      'BENCH_SCALE_PARTS=dashboard: no part named "dashboard"; give a comma list of dashboards,',
    );
  });
});

describe("a BENCH_* value the scale part cannot use", () => {
  it("is a BenchInputError, which the run prints without a stack and exits 2 on", () => {
    const refusals = [
      () => scaleParts({ BENCH_SCALE_PARTS: "x" }),
      () => scaleShape({ BENCH_SCALE_SHAPE: "orgg" }),
      () => rangesAsked({ BENCH_SCALE_RANGES: "7d" }),
      () => loadWindow({ BENCH_SCALE_DAYS: "0" }, END),
      () => loadWindow({ BENCH_SCALE_MONTH: "2026-13" }, END),
    ];
    for (const refuse of refusals) expect(refuse).toThrow(BenchInputError);
  });
});
