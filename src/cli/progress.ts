// Progress of a long run (a backfill of a year takes hours): on a terminal a live bar with
// windows done of total, rows, rows per second and ETA; elsewhere (a log file, CI, a pipe) one
// structured log line every few seconds, since a bar redrawn with \r is noise there. Wired in as the run's RunObserver.
import cliProgress from "cli-progress";
import type { Progress, RunObserver } from "../pipeline/context.js";
import type { Logger } from "../util/logger.js";

export interface ProgressObserver extends RunObserver {
  /** Stops a bar still drawn (the run ended without onRunEnd, e.g. it never started). */
  close(): void;
}

export interface ProgressOptions {
  /** Between two progress log lines when not on a terminal (default 5s). */
  intervalMs?: number;
  /** False: log lines even on a terminal (e.g. when the logs go to the same terminal). */
  bar?: boolean;
  /** The clock (tests). */
  nowMs?: () => number;
}

const DEFAULT_INTERVAL_MS = 5_000;

export function createProgressObserver(
  logger: Logger,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  options: ProgressOptions = {},
): ProgressObserver {
  const bar = options.bar !== false && stream.isTTY === true;
  return bar
    ? new BarProgress(stream, options)
    : new LogProgress(logger, options);
}

/** Rates and ETA of one run, from when the observer first heard of it. */
class RunClock {
  readonly #now: () => number;
  #startedAtMs: number;
  #job: string | undefined;

  constructor(now: () => number) {
    this.#now = now;
    this.#startedAtMs = now();
  }

  /** True when this event starts a new run (another job, or the count started over). */
  observe(p: Progress, lastDone: number): boolean {
    const fresh = this.#job !== p.job || p.windowsDone < lastDone;
    if (fresh && this.#job !== undefined) this.#startedAtMs = this.#now();
    this.#job = p.job;
    return fresh;
  }

  reset(): void {
    this.#job = undefined;
    this.#startedAtMs = this.#now();
  }

  elapsedSeconds(): number {
    return Math.max(0.001, (this.#now() - this.#startedAtMs) / 1000);
  }

  rowsPerSecond(rows: number): number {
    return Math.round(rows / this.elapsedSeconds());
  }

  /** Seconds left at the pace so far, undefined before the first window is done. */
  etaSeconds(p: Progress): number | undefined {
    if (p.windowsDone <= 0) return undefined;
    return Math.round(
      (this.elapsedSeconds() / p.windowsDone) *
        Math.max(0, p.windowsTotal - p.windowsDone),
    );
  }
}

class BarProgress implements ProgressObserver {
  readonly #bar: cliProgress.SingleBar;
  readonly #clock: RunClock;
  #active = false;
  #done = 0;

  constructor(stream: NodeJS.WritableStream, options: ProgressOptions) {
    this.#clock = new RunClock(options.nowMs ?? Date.now);
    this.#bar = new cliProgress.SingleBar(
      {
        stream,
        format:
          "{job} [{bar}] {value}/{total} windows | {rows} rows | {rate} rows/s | ETA {eta_formatted} | {position}",
        hideCursor: true,
        // The service handles signals itself; the bar only has to be stopped.
        gracefulExit: false,
        etaBuffer: 20,
        etaAsynchronousUpdate: true,
        noTTYOutput: false,
      },
      cliProgress.Presets.shades_classic,
    );
  }

  onProgress(p: Progress): void {
    const fresh = this.#clock.observe(p, this.#done);
    const payload = {
      job: p.job,
      rows: p.rows,
      rate: this.#clock.rowsPerSecond(p.rows),
      position:
        p.positionMs === undefined
          ? ""
          : new Date(p.positionMs).toISOString().slice(0, 16).replace("T", " "),
    };
    if (!this.#active || fresh) {
      // The bar's redraw timer lives only while a run is going; onRunEnd stops it.
      if (this.#active) this.#bar.stop();
      this.#bar.start(p.windowsTotal, p.windowsDone, payload);
      this.#active = true;
    } else {
      this.#bar.setTotal(p.windowsTotal);
      this.#bar.update(p.windowsDone, payload);
    }
    this.#done = p.windowsDone;
  }

  onRunEnd(): void {
    this.close();
  }

  close(): void {
    if (!this.#active) return;
    this.#active = false;
    this.#done = 0;
    this.#bar.stop();
    this.#clock.reset();
  }
}

class LogProgress implements ProgressObserver {
  readonly #logger: Logger;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #clock: RunClock;
  #lastLogMs = -Infinity;
  #done = 0;

  constructor(logger: Logger, options: ProgressOptions) {
    this.#logger = logger;
    this.#intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
    this.#now = options.nowMs ?? Date.now;
    this.#clock = new RunClock(this.#now);
  }

  onProgress(p: Progress): void {
    const fresh = this.#clock.observe(p, this.#done);
    this.#done = p.windowsDone;
    const now = this.#now();
    const last = p.windowsDone >= p.windowsTotal;
    // No timer: a line when progress arrives and the interval has passed, plus the last one.
    if (!fresh && !last && now - this.#lastLogMs < this.#intervalMs) return;
    this.#lastLogMs = now;
    const eta = this.#clock.etaSeconds(p);
    this.#logger.info(
      {
        job: p.job,
        windowsDone: p.windowsDone,
        windowsTotal: p.windowsTotal,
        percent:
          p.windowsTotal > 0
            ? Math.floor((p.windowsDone / p.windowsTotal) * 100)
            : 100,
        rows: p.rows,
        rowsPerSecond: this.#clock.rowsPerSecond(p.rows),
        ...(eta === undefined ? {} : { etaSeconds: eta }),
        ...(p.positionMs === undefined
          ? {}
          : { position: new Date(p.positionMs).toISOString() }),
      },
      "progress",
    );
  }

  onRunEnd(): void {
    this.close();
  }

  close(): void {
    this.#done = 0;
    this.#lastLogMs = -Infinity;
    this.#clock.reset();
  }
}
