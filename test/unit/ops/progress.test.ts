// Progress of long runs: a live bar on a terminal, a log line every few seconds elsewhere.
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createProgressObserver } from "../../../src/cli/progress.js";
import { memoryLogger } from "../../helpers/logs.js";

const T0 = Date.UTC(2026, 10, 16, 12, 0, 0);

function terminal(): {
  stream: Writable & { isTTY: boolean; columns: number };
  text: () => string;
} {
  const chunks: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString("utf8"));
        cb();
      },
    }),
    { isTTY: true, columns: 160 },
  );
  return { stream, text: () => chunks.join("") };
}

const end = {
  status: "succeeded" as const,
  ms: 1,
  counters: { pages: 0, rowsInserted: 0, deadLetters: 0, retries: 0 },
};

describe("progress", () => {
  it("logs a line every few seconds when not on a terminal, with rate and ETA, and the last one", () => {
    let now = T0;
    const log = memoryLogger();
    const p = createProgressObserver(
      log.logger,
      new Writable({ write: (_c, _e, cb) => cb() }),
      { intervalMs: 5_000, nowMs: () => now },
    );
    const event = (done: number, rows: number) =>
      p.onProgress?.({
        job: "sessions",
        windowsDone: done,
        windowsTotal: 10,
        rows,
        positionMs: T0 + done * 3_600_000,
      });
    now += 2_000;
    event(1, 1_000);
    now += 2_000;
    event(2, 2_000);
    now += 2_000;
    event(3, 3_000);
    now += 2_000;
    event(4, 4_000);
    now += 12_000;
    event(10, 10_000);
    p.onRunEnd?.({ job: "sessions", ...end });

    const lines = log.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "progress");
    expect(lines.map((l) => l.windowsDone)).toEqual([1, 4, 10]);
    expect(lines[0]).toMatchObject({
      job: "sessions",
      windowsTotal: 10,
      rows: 1_000,
      rowsPerSecond: 500,
      etaSeconds: 18,
      percent: 10,
    });
    expect(lines[1]).toMatchObject({
      rows: 4_000,
      rowsPerSecond: 500,
      etaSeconds: 12,
      position: new Date(T0 + 4 * 3_600_000).toISOString(),
    });
    expect(lines[2]).toMatchObject({
      windowsDone: 10,
      percent: 100,
      etaSeconds: 0,
    });
  });

  it("starts over for the next run", () => {
    let now = T0;
    const log = memoryLogger();
    const p = createProgressObserver(
      log.logger,
      new Writable({ write: (_c, _e, cb) => cb() }),
      { nowMs: () => now },
    );
    p.onProgress?.({ job: "a", windowsDone: 1, windowsTotal: 2, rows: 10 });
    p.onRunEnd?.({ job: "a", ...end });
    now += 1_000;
    p.onProgress?.({ job: "b", windowsDone: 1, windowsTotal: 4, rows: 40 });
    const lines = log.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === "progress");
    expect(lines.map((l) => l.job)).toEqual(["a", "b"]);
    expect(lines[1]).toMatchObject({ rowsPerSecond: 40 });
  });

  it("draws a live bar on a terminal: windows done of total, rows, rows/s, ETA; stops with the run", async () => {
    const log = memoryLogger();
    const term = terminal();
    const p = createProgressObserver(log.logger, term.stream);
    p.onProgress?.({
      job: "sessions",
      windowsDone: 1,
      windowsTotal: 8,
      rows: 1234,
      positionMs: T0,
    });
    p.onProgress?.({
      job: "sessions",
      windowsDone: 2,
      windowsTotal: 8,
      rows: 2468,
      positionMs: T0 + 3_600_000,
    });
    p.onRunEnd?.({ job: "sessions", ...end });
    const text = term.text();
    expect(text).toMatch(
      /sessions \[[█░]+\] \d\/8 windows \| \d+ rows \| \d+ rows\/s \| ETA \S+/,
    );
    expect(text).toContain("1234 rows");
    expect(text).toContain("2026-11-16 12:00");
    // Nothing is logged when the bar shows it, and nothing is drawn once the run has ended.
    expect(log.lines.filter((l) => l.includes('"progress"'))).toEqual([]);
    const length = text.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(term.text().length).toBe(length);
    p.close();
  });

  it("logs instead of drawing when asked to, even on a terminal", () => {
    const log = memoryLogger();
    const term = terminal();
    const p = createProgressObserver(log.logger, term.stream, { bar: false });
    p.onProgress?.({
      job: "sessions",
      windowsDone: 1,
      windowsTotal: 1,
      rows: 1,
    });
    expect(term.text()).toBe("");
    expect(log.text()).toContain('"msg":"progress"');
  });
});
