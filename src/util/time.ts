// Instants on the command line and in checkpoints. Everything is UTC epoch milliseconds inside.
import { UsageError } from "./errors.js";
import { parseDurationMs } from "./duration.js";

/** The forms an instant is written in, for messages. */
const FORMS = `write it as 2026-11-01, 2026-11-01T10:00:00Z, a month (2026-11), an ISO week (2026-W44), Unix seconds, "now" or a relative time such as -7d`;

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
  const period = periodStartMs(text, flag);
  if (period !== undefined) return period;
  const date = DATE_TIME.exec(text);
  if (date) {
    const [, y, mo, d, h, mi, sec] = date.map(Number);
    const problem = calendarProblem(y ?? 0, mo ?? 0, d ?? 0, h, mi, sec);
    if (problem !== undefined)
      throw new UsageError(`${flag} "${value}" is not a date: ${problem}`, {
        hint: `give a day the calendar has; ${FORMS}`,
      });
    // A date-time without a zone is read as UTC, never as the machine's local time.
    const iso =
      /T|\s/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/i.test(text)
        ? `${text}Z`
        : text;
    const ms = Date.parse(iso.replace(" ", "T"));
    if (Number.isFinite(ms)) return ms;
  }
  throw new UsageError(`${flag} "${value}" is not a date`, {
    hint: FORMS,
  });
}

/**
 * A date with an optional time of day and zone: 2026-11-01, 2026-11-01T10:00, 2026-11-01 10:00:00,
 * 2026-11-01T10:00:00.250Z, 2026-11-01T10:00:00+02:00. The groups are year, month, day, hour,
 * minute, second.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
] as const;

/** Days in a month (1–12) of the Gregorian calendar. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2)
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * What no calendar has in a date and time of day (a month 13, February 30, an hour 24, a minute
 * or second 60): the one check behind every date read from a person or from the control plane,
 * since Date.parse rolls "2026-02-30" over to March 2. Undefined when the calendar has it.
 */
export function calendarProblem(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): string | undefined {
  if (month < 1 || month > 12) return `there is no month ${month}`;
  const days = daysInMonth(year, month);
  if (day < 1 || day > days)
    return `${MONTH_NAMES[month - 1]} ${year} has ${days} days`;
  if (hour > 23) return `there is no hour ${hour} in a day`;
  if (minute > 59) return `there is no minute ${minute} in an hour`;
  if (second > 59) return `there is no second ${second} in a minute`;
  return undefined;
}

const MONTH_FORM = /^(\d{4})-(\d{2})$/;
const ISO_WEEK_FORM = /^(\d{4})-W(\d{2})$/i;
const DAY_MS = 86_400_000;

/** ISO weeks in `year`: 53 when it starts on a Thursday, or is a leap year starting on a Wednesday. */
function isoWeeksIn(year: number): number {
  const jan1 = new Date(Date.UTC(year, 0, 1)).getUTCDay();
  const leap = daysInMonth(year, 2) === 29;
  return jan1 === 4 || (leap && jan1 === 3) ? 53 : 52;
}

/**
 * The first instant of a month (2026-11) or an ISO week (2026-W44, its Monday 00:00 UTC);
 * undefined for text of neither form; a usage error naming the value for a month or week no
 * calendar has.
 */
function periodStartMs(text: string, flag: string): number | undefined {
  const month = MONTH_FORM.exec(text);
  if (month) {
    const [y, m] = [Number(month[1]), Number(month[2])];
    const problem = calendarProblem(y, m, 1);
    if (problem !== undefined)
      throw new UsageError(`${flag} "${text}" is not a month: ${problem}`, {
        hint: FORMS,
      });
    return Date.UTC(y, m - 1, 1);
  }
  const week = ISO_WEEK_FORM.exec(text);
  if (!week) return undefined;
  const [y, w] = [Number(week[1]), Number(week[2])];
  const weeks = isoWeeksIn(y);
  if (w < 1 || w > weeks)
    throw new UsageError(
      `${flag} "${text}" is not an ISO week: ${y} has weeks 1 to ${weeks}`,
      { hint: FORMS },
    );
  // Week 1 holds January 4; its Monday is the week's first day.
  const jan4 = Date.UTC(y, 0, 4);
  const weekday = (new Date(jan4).getUTCDay() + 6) % 7;
  return jan4 - weekday * DAY_MS + (w - 1) * 7 * DAY_MS;
}

export function floorTo(ms: number, stepMs: number): number {
  return Math.floor(ms / stepMs) * stepMs;
}
