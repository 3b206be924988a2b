// A report's progress on a terminal: once a report has run a few seconds, one line on stderr,
// rewritten in place (which table it is on, n of m, the time so far), cleared when it ends.
// Nothing when stderr is not a terminal (a pipe, a log file, CI), and never on stdout, which
// may carry what the command prints.
import type { ReportStep } from "../reports/kinds/context.js";

/** A report quicker than this shows no progress. */
export const PROGRESS_AFTER_MS = 2_000;
/** How often the line is drawn again (its time so far moves). */
const REDRAW_MS = 1_000;
/** Erases from the cursor to the end of the line. */
const CLEAR_TO_END = "\x1b[K";

/** Whether a report's progress is shown: on a terminal, once it has run PROGRESS_AFTER_MS. */
export function showsProgress(
  isTTY: boolean | undefined,
  elapsedMs: number,
): boolean {
  return isTTY === true && elapsedMs >= PROGRESS_AFTER_MS;
}

/**
 * The line shown: `report access-review: 3 of 9, New access since the previous period (12 s)`,
 * cut to fit in `columns` characters (the terminal's width) when it is known.
 */
export function progressLine(
  kind: string,
  step: ReportStep,
  elapsedMs: number,
  columns?: number,
): string {
  const line = `report ${kind}: ${step.n} of ${step.of}, ${step.what} (${Math.floor(elapsedMs / 1000)} s)`;
  if (columns === undefined || columns <= 1 || line.length < columns)
    return line;
  return `${line.slice(0, Math.max(0, columns - 2))}…`;
}

type Terminal = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** The progress line of one report on `stream` (stderr). */
export class ReportProgressLine {
  readonly #kind: string;
  readonly #stream: Terminal;
  readonly #now: () => number;
  readonly #startedMs: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #step: ReportStep | undefined;
  #drawn = false;

  constructor(
    kind: string,
    stream: Terminal = process.stderr,
    nowMs: () => number = Date.now,
  ) {
    this.#kind = kind;
    this.#stream = stream;
    this.#now = nowMs;
    this.#startedMs = nowMs();
    // Not on a terminal: nothing is ever drawn, so nothing is timed either.
    this.#timer =
      stream.isTTY === true
        ? setInterval(() => this.draw(), REDRAW_MS).unref()
        : undefined;
  }

  /** The step the report is on now (drawn at once when the line is shown). */
  readonly update = (step: ReportStep): void => {
    this.#step = step;
    this.draw();
  };

  /** Draws the line over the last one, when it is to be shown. */
  draw(): void {
    const elapsed = this.#now() - this.#startedMs;
    if (!this.#step || !showsProgress(this.#stream.isTTY, elapsed)) return;
    const line = progressLine(
      this.#kind,
      this.#step,
      elapsed,
      this.#stream.columns,
    );
    this.#stream.write(`\r${line}${CLEAR_TO_END}`);
    this.#drawn = true;
  }

  /** Stops drawing and erases the line, so what comes next starts on a clean line. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    if (this.#drawn) this.#stream.write(`\r${CLEAR_TO_END}`);
    this.#drawn = false;
  }
}
