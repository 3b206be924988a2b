// The simulator's notion of "now". Generated data never depends on it (it depends only on the
// seed and absolute time); the clock only decides which of those sessions already exist and
// whether they are still open. Tests pin it (fixed), demos speed it up (accelerated).

import { parseRfc3339 } from "./time.js";

type ClockMode = "real" | "fixed" | "accelerated";

type SimClockOptions =
  | { mode: "real" }
  | { mode: "fixed"; atMs: number }
  | { mode: "accelerated"; factor: number; startMs?: number };

export class SimClock {
  readonly mode: ClockMode;
  /** Simulated milliseconds per real millisecond: 0 fixed, 1 real, factor accelerated. */
  readonly rate: number;
  private anchorSimMs: number;
  private anchorRealMs: number;

  constructor(
    options: SimClockOptions = { mode: "real" },
    private readonly realNow: () => number = Date.now,
  ) {
    this.mode = options.mode;
    const real = realNow();
    this.anchorRealMs = real;
    switch (options.mode) {
      case "real":
        this.rate = 1;
        this.anchorSimMs = real;
        break;
      case "fixed":
        this.rate = 0;
        this.anchorSimMs = checkedMs(options.atMs);
        break;
      case "accelerated":
        if (!(Number.isFinite(options.factor) && options.factor > 0)) {
          throw new RangeError(
            `accelerated clock factor must be a positive number, got ${options.factor}`,
          );
        }
        this.rate = options.factor;
        this.anchorSimMs = checkedMs(options.startMs ?? real);
        break;
    }
  }

  static real(): SimClock {
    return new SimClock({ mode: "real" });
  }

  static fixed(at: number | Date | string): SimClock {
    return new SimClock({ mode: "fixed", atMs: toMs(at) });
  }

  static accelerated(factor: number, start?: number | Date | string): SimClock {
    return new SimClock({
      mode: "accelerated",
      factor,
      ...(start === undefined ? {} : { startMs: toMs(start) }),
    });
  }

  /** Epoch milliseconds (integer). */
  now(): number {
    if (this.rate === 0) return this.anchorSimMs;
    return Math.floor(
      this.anchorSimMs + (this.realNow() - this.anchorRealMs) * this.rate,
    );
  }

  /** Jump to `ms`; a running clock keeps running from there. */
  set(ms: number): void {
    this.anchorSimMs = checkedMs(ms);
    this.anchorRealMs = this.realNow();
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms))
      throw new RangeError(`cannot advance the clock by ${ms}`);
    this.anchorSimMs += ms;
  }

  describe(): string {
    const at = new Date(this.now()).toISOString();
    if (this.mode === "accelerated")
      return `accelerated ×${this.rate} (now ${at})`;
    return `${this.mode} (now ${at})`;
  }
}

function checkedMs(ms: number): number {
  if (!Number.isFinite(ms)) throw new RangeError(`invalid clock time ${ms}`);
  return Math.floor(ms);
}

function toMs(at: number | Date | string): number {
  if (typeof at === "number") return at;
  if (at instanceof Date) return at.getTime();
  const ms = parseRfc3339(at);
  if (ms === undefined) throw new RangeError(`invalid RFC 3339 time "${at}"`);
  return ms;
}

/**
 * CLI form of a clock: `real`, `fixed:<RFC3339>` or `accelerated:<factor>[@<RFC3339>]`
 * (without a start time an accelerated clock starts at the real now).
 */
export function parseClockSpec(
  spec: string,
  realNow: () => number = Date.now,
): SimClock {
  const text = spec.trim();
  const usage =
    "expected real, fixed:<RFC3339> or accelerated:<factor>[@<RFC3339>]";
  if (text === "real") return new SimClock({ mode: "real" }, realNow);
  if (text.startsWith("fixed:")) {
    const when = text.slice("fixed:".length);
    const ms = parseRfc3339(when);
    if (ms === undefined) {
      throw new Error(
        `--clock: "${when}" is not an RFC 3339 time (e.g. 2026-11-02T10:00:00Z)`,
      );
    }
    return new SimClock({ mode: "fixed", atMs: ms }, realNow);
  }
  if (text.startsWith("accelerated:")) {
    const rest = text.slice("accelerated:".length);
    const at = rest.indexOf("@");
    const factorText = at < 0 ? rest : rest.slice(0, at);
    const factor = Number(factorText);
    if (factorText === "" || !Number.isFinite(factor) || factor <= 0) {
      throw new Error(
        `--clock: accelerated factor "${factorText}" must be a positive number`,
      );
    }
    if (at < 0) return new SimClock({ mode: "accelerated", factor }, realNow);
    const when = rest.slice(at + 1);
    const startMs = parseRfc3339(when);
    if (startMs === undefined) {
      throw new Error(
        `--clock: accelerated start "${when}" is not an RFC 3339 time`,
      );
    }
    return new SimClock({ mode: "accelerated", factor, startMs }, realNow);
  }
  throw new Error(`--clock: unknown clock "${spec}"; ${usage}`);
}
