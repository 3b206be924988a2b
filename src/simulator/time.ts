import type { ByteSink } from "./bytes.js";

// Time formatting and parsing shared by the simulator's wire encoder, clock and request
// parser. Output follows proto3 JSON as Go's protojson writes it (the likely encoder of the
// real service): RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits, whichever is the
// shortest exact form, and Durations as seconds with the same digit rule.

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) =>
  String(i).padStart(2, "0"),
);
const MILLI_FRACTIONS = Array.from({ length: 1000 }, (_, i) =>
  i === 0 ? "" : "." + String(i).padStart(3, "0"),
);

function fraction(nanos: number): string {
  if (nanos === 0) return "";
  if (nanos % 1_000_000 === 0) return MILLI_FRACTIONS[nanos / 1_000_000] ?? "";
  if (nanos % 1000 === 0) return "." + String(nanos / 1000).padStart(6, "0");
  return "." + String(nanos).padStart(9, "0");
}

// Formatting runs once or twice per served session (100000-session pages), and
// Date#toISOString costs more than the rest of a session's encoding: cache the date part per
// UTC day and compute the time of day by arithmetic.
const dayPrefixes = new Map<number, string>();

function dayPrefix(day: number): string {
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    if (dayPrefixes.size >= 4096) dayPrefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11); // YYYY-MM-DDT
    dayPrefixes.set(day, prefix);
  }
  return prefix;
}

/**
 * RFC 3339 UTC timestamp of epoch `ms` plus `subMsNanos` (0..999999) nanoseconds.
 * Sub-millisecond nanos exist because the real service stores finer than milliseconds,
 * and clients must cope with every digit count.
 */
export function formatTimestamp(ms: number, subMsNanos = 0): string {
  const whole = Math.floor(ms);
  const day = Math.floor(whole / DAY_MS);
  const inDay = whole - day * DAY_MS;
  const seconds = Math.floor(inDay / 1000);
  const millis = inDay - seconds * 1000;
  return (
    dayPrefix(day) +
    TWO_DIGITS[Math.floor(seconds / 3600)] +
    ":" +
    TWO_DIGITS[Math.floor(seconds / 60) % 60] +
    ":" +
    TWO_DIGITS[seconds % 60] +
    fraction(millis * 1_000_000 + subMsNanos) +
    "Z"
  );
}

/** protobuf Duration JSON ("3600s", "12.500s") of a non-negative millisecond count. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.floor(ms));
  const seconds = Math.floor(whole / 1000);
  return String(seconds) + fraction((whole % 1000) * 1_000_000) + "s";
}

/** Fraction of `nanos` (0..999999999) with 0, 3, 6 or 9 digits, written to a sink. */
function writeFraction(sink: ByteSink, nanos: number): void {
  if (nanos === 0) return;
  sink.byte(46); // "."
  if (nanos % 1_000_000 === 0) sink.digits(nanos / 1_000_000, 3);
  else if (nanos % 1000 === 0) sink.digits(nanos / 1000, 6);
  else sink.digits(nanos, 9);
}

/** formatTimestamp, written as bytes (the page encoder's path). */
export function writeTimestamp(
  sink: ByteSink,
  ms: number,
  subMsNanos = 0,
): void {
  const whole = Math.floor(ms);
  const day = Math.floor(whole / DAY_MS);
  const inDay = whole - day * DAY_MS;
  const seconds = Math.floor(inDay / 1000);
  sink.ascii(dayPrefix(day));
  sink.digits(Math.floor(seconds / 3600), 2);
  sink.byte(58); // ":"
  sink.digits(Math.floor(seconds / 60) % 60, 2);
  sink.byte(58);
  sink.digits(seconds % 60, 2);
  writeFraction(sink, (inDay - seconds * 1000) * 1_000_000 + subMsNanos);
  sink.byte(90); // "Z"
}

/** formatDuration, written as bytes. */
export function writeDuration(sink: ByteSink, ms: number): void {
  const whole = Math.max(0, Math.floor(ms));
  sink.uint(Math.floor(whole / 1000));
  writeFraction(sink, (whole % 1000) * 1_000_000);
  sink.byte(115); // "s"
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch ms of an RFC 3339 date-time (fraction truncated to ms), or undefined if invalid. */
export function parseRfc3339(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 60
  ) {
    return undefined;
  }
  // Date.UTC silently rolls 31 April into 1 May: compare the day back to reject it.
  const base = Date.UTC(
    year,
    month - 1,
    day,
    hour,
    minute,
    Math.min(second, 59),
  );
  if (new Date(base).getUTCDate() !== day) return undefined;
  let ms = base + Number((frac ?? "").padEnd(3, "0").slice(0, 3) || "0");
  if (sign !== undefined) {
    const offsetMin = Number(oh) * 60 + Number(om);
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    ms -= (sign === "+" ? 1 : -1) * offsetMin * MINUTE_MS;
  }
  return ms;
}
