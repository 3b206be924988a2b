// The bench's percentiles: nearest rank, so a p95 of a few runs is the slowest of them, never
// the median.
import { describe, expect, it } from "vitest";
import { percentile } from "../../../bench/harness.js";

describe("percentile", () => {
  it("is the nearest rank of the sorted runs", () => {
    const five = [10, 20, 30, 40, 50];
    expect(percentile(five, 0.5)).toBe(30);
    expect(percentile(five, 0.95)).toBe(50);
    expect(percentile([10, 20, 30], 0.95)).toBe(30);
    expect(percentile([10, 20, 30], 0.5)).toBe(20);
    const ten = Array.from({ length: 10 }, (_, i) => i + 1);
    expect(percentile(ten, 0.95)).toBe(10);
    expect(percentile(ten, 0.9)).toBe(9);
    expect(percentile(ten, 0.5)).toBe(5);
  });

  it("of one run is that run, of none NaN", () => {
    expect(percentile([7], 0.5)).toBe(7);
    expect(percentile([7], 0.95)).toBe(7);
    expect(percentile([], 0.5)).toBeNaN();
  });
});
