// A remote service's pace, simulated: every answer starts after a time to first byte, its body
// flows at a bounded rate, and the server answers only so many requests at once (the others
// wait their turn). What a backfill against the real service spends its time on.
import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface LatencyOptions {
  /** Milliseconds before the first byte of every answer. */
  firstByteMs: number;
  /** Body bytes per second of one answer (0: unbounded). */
  bytesPerSecond: number;
  /** Requests answered at once; more wait (0: unbounded). */
  maxConcurrent: number;
}

/** Parses `--latency 400ms,20MB/s,4` (time to first byte, rate per answer, concurrency). */
export function parseLatencySpec(spec: string): LatencyOptions {
  const parts = spec.split(",").map((p) => p.trim());
  const out: LatencyOptions = {
    firstByteMs: 0,
    bytesPerSecond: 0,
    maxConcurrent: 0,
  };
  for (const part of parts) {
    let m: RegExpExecArray | null;
    if ((m = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(part))) {
      out.firstByteMs = Number(m[1]) * (m[2] === "s" ? 1000 : 1);
    } else if ((m = /^(\d+(?:\.\d+)?)(KB|MB|GB)\/s$/i.exec(part))) {
      const unit = { kb: 1e3, mb: 1e6, gb: 1e9 }[
        (m[2] as string).toLowerCase() as "kb" | "mb" | "gb"
      ];
      out.bytesPerSecond = Math.round(Number(m[1]) * unit);
    } else if (/^\d+$/.test(part)) {
      out.maxConcurrent = Number(part);
    } else {
      throw new Error(
        `latency "${part}" is not a time to first byte (400ms), a rate (20MB/s) or a concurrency (4)`,
      );
    }
  }
  return out;
}

/** Admits requests up to the concurrency limit, in arrival order. */
export class ConcurrencyGate {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  async enter(): Promise<void> {
    if (this.#limit <= 0) return;
    if (this.#running < this.#limit) {
      this.#running++;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  leave(): void {
    if (this.#limit <= 0) return;
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running--;
  }
}

/** Slices an answer's body is sent in, a twentieth of a second's worth each. */
const SLICES_PER_SECOND = 20;

/** Writes `body` at `bytesPerSecond`, after the headers; resolves when it is all written. */
export async function sendPaced(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: Buffer,
  bytesPerSecond: number,
  signal: AbortSignal,
): Promise<void> {
  res.writeHead(status, { ...headers, "Content-Length": body.length });
  if (bytesPerSecond <= 0) {
    res.end(body);
    return;
  }
  const slice = Math.max(1, Math.floor(bytesPerSecond / SLICES_PER_SECOND));
  const started = performance.now();
  for (let at = 0; at < body.length; at += slice) {
    if (res.destroyed || signal.aborted) return;
    // Paced against the start, so slow writes do not add up to a slower rate.
    const dueMs = (at / bytesPerSecond) * 1000 - (performance.now() - started);
    if (dueMs > 0) await sleep(dueMs);
    res.write(body.subarray(at, Math.min(body.length, at + slice)));
  }
  res.end();
}
