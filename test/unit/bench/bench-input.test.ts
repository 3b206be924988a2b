// The bench's options read before it runs: BENCH_ONLY's parts and which parts a run takes.
import { describe, expect, it } from "vitest";
import { benchOnly, partRuns } from "../../../bench/bench-input.js";
import { BenchInputError } from "../../../bench/scale-options.js";

describe("BENCH_ONLY", () => {
  it("is every part but the reports and the scale part when unset", () => {
    expect(benchOnly({})).toBeUndefined();
    expect(partRuns("sessions", {})).toBe(true);
    expect(partRuns("reports", {})).toBe(false);
    expect(partRuns("scale", {})).toBe(false);
    expect(partRuns("scale", { BENCH_SCALE: "1m" })).toBe(true);
  });

  it("runs only the parts it names", () => {
    const env = { BENCH_ONLY: "reports, scale" };
    expect(benchOnly(env)).toEqual(["reports", "scale"]);
    expect(partRuns("reports", env)).toBe(true);
    expect(partRuns("sessions", env)).toBe(false);
  });

  it("refuses a part it does not know, the nearest first, as a BenchInputError", () => {
    const refuse = () => benchOnly({ BENCH_ONLY: "sessions,sesions" });
    expect(refuse).toThrow(BenchInputError);
    expect(refuse).toThrow(
      'BENCH_ONLY=sessions,sesions: no part named "sesions"; give a comma list of sessions,',
    );
  });
});
