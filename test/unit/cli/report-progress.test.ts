// A report's progress: on a terminal, once the report has run a few seconds, one line on stderr
// rewritten in place and erased at the end; nothing at all when stderr is not a terminal.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  progressLine,
  PROGRESS_AFTER_MS,
  ReportProgressLine,
  showsProgress,
} from "../../../src/cli/report-progress.js";

/** A stream that keeps what is written to it. */
function stream(isTTY: boolean, columns?: number) {
  const written: string[] = [];
  return {
    isTTY,
    columns,
    written,
    write: (chunk: string) => {
      written.push(chunk);
      return true;
    },
  } as unknown as NodeJS.WritableStream & {
    isTTY: boolean;
    written: string[];
  };
}

const step = (n: number, what = `table ${n}`) => ({ n, of: 9, what });

describe("showsProgress", () => {
  it("shows on a terminal once the report has run long enough, never elsewhere", () => {
    expect(showsProgress(true, PROGRESS_AFTER_MS - 1)).toBe(false);
    expect(showsProgress(true, PROGRESS_AFTER_MS)).toBe(true);
    expect(showsProgress(false, 3_600_000)).toBe(false);
    expect(showsProgress(undefined, 3_600_000)).toBe(false);
  });
});

describe("progressLine", () => {
  it("names the report, the step n of m, what it is on and the time so far", () => {
    expect(
      progressLine(
        "access-review",
        step(3, "New access since the previous period"),
        12_400,
      ),
    ).toBe(
      "report access-review: 3 of 9, New access since the previous period (12 s)",
    );
  });

  it("fits in the terminal's width", () => {
    const line = progressLine("access-review", step(3, "x".repeat(200)), 0, 40);
    expect(line).toHaveLength(39);
    expect(line.endsWith("…")).toBe(true);
  });
});

describe("ReportProgressLine", () => {
  let now = 0;
  beforeEach(() => {
    now = 0;
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("on a terminal: nothing before a few seconds, then one line rewritten in place, erased at the end", () => {
    const s = stream(true, 120);
    const p = new ReportProgressLine("policy-exceptions", s, () => now);
    p.update(step(1));
    now = PROGRESS_AFTER_MS - 1;
    vi.advanceTimersByTime(PROGRESS_AFTER_MS - 1);
    expect(s.written).toEqual([]);
    now = PROGRESS_AFTER_MS;
    p.update(step(2));
    now += 1_000;
    vi.advanceTimersByTime(1_000);
    p.close();
    expect(s.written).toEqual([
      "\rreport policy-exceptions: 2 of 9, table 2 (2 s)\x1b[K",
      "\rreport policy-exceptions: 2 of 9, table 2 (3 s)\x1b[K",
      "\r\x1b[K",
    ]);
    expect(s.written.join("")).not.toContain("\n");
  });

  it("not on a terminal (a pipe, a log, CI): writes nothing, however long the report", () => {
    const s = stream(false);
    const p = new ReportProgressLine("access-review", s, () => now);
    for (let i = 1; i <= 9; i++) {
      now += 60_000;
      vi.advanceTimersByTime(60_000);
      p.update(step(i));
    }
    p.close();
    expect(s.written).toEqual([]);
  });

  it("a quick report on a terminal leaves nothing behind", () => {
    const s = stream(true);
    const p = new ReportProgressLine("access-review", s, () => now);
    p.update(step(1));
    now = 500;
    p.update(step(9));
    p.close();
    expect(s.written).toEqual([]);
  });
});
