// Durations in config and on the command line: "90s", "15m", "1h", "7d", "500ms", or plain
// milliseconds. One parser so that every option reads the same way.

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/** Milliseconds of a duration string, or undefined when it does not parse. */
export function parseDurationMs(value: string | number): number | undefined {
  if (typeof value === "number")
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const m = DURATION.exec(text);
  if (!m) return undefined;
  const unit = UNIT_MS[m[2] ?? ""];
  return unit === undefined ? undefined : Math.round(Number(m[1]) * unit);
}
