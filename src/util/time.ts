// Instants on the command line and in checkpoints. Everything is UTC epoch milliseconds inside.
import { UsageError } from "./errors.js";
import { parseDurationMs } from "./duration.js";

/**
 * Parses `--from/--to` values: RFC 3339 / ISO 8601 (`2026-11-01`, `2026-11-01T10:00:00Z`),
 * Unix seconds, `now`, or a relative `-7d` / `-2h` (before `nowMs`).
 */
export function parseInstant(
  value: string,
  flag: string,
  nowMs: number,
): number {
  const text = value.trim();
  if (text === "now") return nowMs;
  if (text.startsWith("-")) {
    const ms = parseDurationMs(text.slice(1));
    if (ms !== undefined) return nowMs - ms;
  }
  if (/^\d{9,11}$/.test(text)) return Number(text) * 1000;
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)) {
    // A date-time without a zone is read as UTC, never as the machine's local time.
    const iso =
      /T|\s/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text)
        ? `${text}Z`
        : text;
    const ms = Date.parse(iso.replace(" ", "T"));
    if (Number.isFinite(ms)) return ms;
  }
  throw new UsageError(`${flag} "${value}" is not a date`, {
    hint: `write it as 2026-11-01, 2026-11-01T10:00:00Z, Unix seconds, "now" or a relative time such as -7d`,
  });
}

export function floorTo(ms: number, stepMs: number): number {
  return Math.floor(ms / stepMs) * stepMs;
}
