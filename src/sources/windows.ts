// Time windows: half-open [startMs, endMs) slices aligned to multiples of the window size, so
// that two runs cut the same history the same way.

export interface Window {
  startMs: number;
  endMs: number;
}

export function planWindows(
  startMs: number,
  endMs: number,
  windowMs: number,
): Window[] {
  const out: Window[] = [];
  let at = startMs;
  while (at < endMs) {
    const next = Math.min(endMs, (Math.floor(at / windowMs) + 1) * windowMs);
    out.push({ startMs: at, endMs: next });
    at = next;
  }
  return out;
}

/** Whole seconds: request timestamps are Unix seconds, so windows are cut on seconds. */
export function floorSecond(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/** A planned range as log fields: where it starts and ends, and how many windows it holds. */
export function rangeLogFields(
  startMs: number,
  endMs: number,
  windows: number,
): { from: string; to: string; windows: number } {
  return {
    from: new Date(startMs).toISOString(),
    to: new Date(endMs).toISOString(),
    windows,
  };
}
