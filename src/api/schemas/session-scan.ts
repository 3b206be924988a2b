// The fastest check of a session record: one pass over its bytes, no object built. The engine
// builds the row from the record itself, so the exporter needs only to know that the record has
// the shape the schema accepts, and the few values the writer reads (the id, the times, the
// name of the brand member). The scan accepts only the plain, expected shape — valid JSON, every
// member the row is built from a string (or the object or array of strings it must be), no
// escapes in the values it reads, timestamps that are real calendar instants, a duration that is
// neither negative nor beyond the longest a row holds, nesting within bounds — and returns
// undefined for anything else, which then goes through JSON.parse and parseSession, which decide
// (and explain a rejection). So the scan never accepts what the schema rejects:
// test/slow/api/session-scan.test.ts holds the two equal on the simulator's records broken at random.
// The bytes must be valid UTF-8 (the page splitter checks that).
import type { z } from "zod";
import { daysInMonth } from "../../util/time.js";
import { str, strArray } from "./common.js";
import { sessionObjects as objects } from "./session.js";

/** What the writer reads of a record the scan accepted. */
export interface ScannedSession {
  id: string;
  /** The start time in epoch milliseconds (sub-millisecond digits truncated, as timestampMs). */
  startMs: number;
  /** The end time in epoch milliseconds; undefined when the record has none (an open session). */
  endMs: number | undefined;
  /** The member holding the identities (see findBrandKey), undefined when there is none. */
  brandMember: string | undefined;
}

/**
 * The scan's answer: the values of a record of the expected shape; `{ ambiguous }` for a record
 * that names a member the row is built from twice (JSON readers disagree on which one counts:
 * the engine reads the first, JavaScript the last), which is kept as a dead letter with that
 * reason; undefined for anything else (parseSession decides).
 */
export type SessionScan = ScanFinding | undefined;

/** What the scan found in a record it read: its values, or that it is ambiguous. */
export type ScanFinding = ScannedSession | { ambiguous: string };

/**
 * Thrown inside the scan to hand the record to parseSession; made once (a throw does not
 * capture a stack, the construction did).
 */
const FALLBACK = new Error("the record is not of the plain, expected shape");

/** Objects and arrays nested deeper than this go to parseSession. */
const MAX_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_S = 0x73;
/** Bit that makes an ASCII letter lower case. */
const LOWER = 0x20;
const LOWER_T = 0x74;
const LOWER_Z = 0x7a;

/**
 * Most whole seconds a duration the scan accepts may have: ten digits are under 317 years, within
 * the longest duration a row holds (sessionValueProblem); longer ones go to parseSession.
 */
const DURATION_SECOND_DIGITS = 10;

/**
 * The members of the objects the row reads, by object (from their schemas in session.ts): each
 * key's bit (for telling a key seen twice) and whether its value must be a string (declared
 * `str`), an array of strings (`strArray`), or is read further.
 */
const enum Is {
  Str,
  Strs,
  Nested,
}
interface Member {
  name: string;
  /** The name's bytes (ASCII), compared in place: no key is decoded to be looked up. */
  bytes: Uint8Array;
  bit: number;
  is: Is;
  /** How an ambiguity reason names the member. */
  path: string;
  /** The members of its value when that is an object of strings (see `flat`). */
  flat: Members | undefined;
}
type Members = readonly Member[];
/** The members of an object read so far: their bits, and the index after the last one. */
interface Seen {
  bits: number;
  next: number;
}
const members = (
  schema: z.ZodObject,
  parent = "",
  flat: Readonly<Record<string, Members>> = {},
): Members =>
  Object.entries(schema.shape).map(([name, type], i) => ({
    name,
    bytes: Buffer.from(name, "latin1"),
    bit: 1 << i,
    is: type === str ? Is.Str : type === strArray ? Is.Strs : Is.Nested,
    path: parent === "" ? name : `${parent}.${name}`,
    flat: flat[name],
  }));

const NATIVE = members(objects.native);
/** The members of `user` other than identity holders. */
const USER = members(objects.user, "user", { native: NATIVE });
const HOLDER = members(objects.holder);
const IDENTITY = members(objects.identity);
const TOP = members(objects.session, "", {
  network: members(objects.network),
  sidecar: members(objects.sidecar),
  resource: members(objects.resource),
  connector: members(objects.connector),
});

/** The bytes a string's scan stops at: its closing quote, an escape, a control character. */
const STRING_STOPS = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOPS[c] = 1;
STRING_STOPS[QUOTE] = 1;
STRING_STOPS[BACKSLASH] = 1;

const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

/** The longest key of `user` otherKey keeps for the next record. */
const MAX_CACHED_KEY_BYTES = 64;

/** Bytes of the day in a timestamp (YYYY-MM-DD). */
const DAY_BYTES = 10;

/** The last day `day` read: its bytes and its epoch milliseconds. */
let lastDay: { bytes: Uint8Array; ms: number } = {
  bytes: new Uint8Array(0),
  ms: NaN,
};

/** The last key of `user` otherKey decoded: its bytes and its text. */
let lastOtherKey: { bytes: Uint8Array; text: string } = {
  bytes: new Uint8Array(0),
  text: "",
};

class Scanner {
  readonly b: Buffer;
  readonly end: number;
  pos = 0;
  /** Where the content of the last string scanned starts. */
  stringStart = 0;
  /** Where the last key read by `key` ends (its closing quote). */
  keyEnd = 0;
  ambiguous: string | undefined;

  constructor(bytes: Buffer, start: number) {
    this.b = bytes;
    this.end = bytes.length;
    this.pos = start;
  }

  /** The next byte after whitespace, not consumed; -1 at the end. */
  peek(): number {
    const b = this.b;
    let p = this.pos;
    while (p < this.end) {
      const c = b[p] as number;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else {
        this.pos = p;
        return c;
      }
    }
    this.pos = p;
    return -1;
  }

  expect(code: number): void {
    if (this.peek() !== code) throw FALLBACK;
    this.pos++;
  }

  /**
   * Steps into the object or array whose opening byte is next (`close` its closing byte), at
   * `depth`: false when it is empty (its closing byte is taken too).
   */
  enter(depth: number, close: number): boolean {
    if (depth >= MAX_DEPTH) throw FALLBACK;
    this.pos++;
    return !this.take(close);
  }

  /** Whether the next byte (after whitespace) is `code`; consumes it if so. */
  take(code: number): boolean {
    if (this.peek() !== code) return false;
    this.pos++;
    return true;
  }

  /**
   * A string at the position; returns the index of its closing quote and leaves the position
   * after it. `plain` strings (the values and keys the scan reads) may hold no escape.
   */
  string(plain: boolean): number {
    if (this.peek() !== QUOTE) throw FALLBACK;
    const b = this.b;
    const end = this.end;
    let p = this.pos + 1;
    this.stringStart = p;
    for (;;) {
      // Bounded by the end: a look past it (an undefined index) would slow every later lookup.
      // Four bytes a step while they fit, then one by one: fewer bound checks and jumps.
      while (p + 4 <= end) {
        if (STRING_STOPS[b[p] as number] !== 0) break;
        if (STRING_STOPS[b[p + 1] as number] !== 0) {
          p += 1;
          break;
        }
        if (STRING_STOPS[b[p + 2] as number] !== 0) {
          p += 2;
          break;
        }
        if (STRING_STOPS[b[p + 3] as number] !== 0) {
          p += 3;
          break;
        }
        p += 4;
      }
      while (p < end && STRING_STOPS[b[p] as number] === 0) p++;
      if (p >= end) throw FALLBACK;
      const c = b[p] as number;
      if (c === QUOTE) break;
      if (c < 0x20) throw FALLBACK;
      if (c === BACKSLASH) {
        if (plain) throw FALLBACK;
        const e = b[p + 1];
        if (e === 0x75) {
          for (let i = p + 2; i < p + 6; i++) if (!isHex(b[i])) throw FALLBACK;
          p += 6;
          continue;
        }
        // " \ / b f n r t
        if (
          e !== QUOTE &&
          e !== BACKSLASH &&
          e !== 0x2f &&
          e !== 0x62 &&
          e !== 0x66 &&
          e !== 0x6e &&
          e !== 0x72 &&
          e !== 0x74
        )
          throw FALLBACK;
        p += 2;
        continue;
      }
      p++;
    }
    this.pos = p + 1;
    return p;
  }

  /** A string without escapes, as its value. */
  plainString(): string {
    const close = this.string(true);
    return this.b.toString("utf8", this.stringStart, close);
  }

  /** Any valid JSON value, skipped. */
  skipValue(depth: number): void {
    const c = this.peek();
    if (c === QUOTE) {
      this.string(false);
      return;
    }
    if (c === OPEN_BRACE) {
      if (this.enter(depth, CLOSE_BRACE)) {
        do {
          this.string(false);
          this.expect(COLON);
          this.skipValue(depth + 1);
        } while (this.take(COMMA));
        this.expect(CLOSE_BRACE);
      }
      return;
    }
    if (c === OPEN_BRACKET) {
      if (this.enter(depth, CLOSE_BRACKET)) {
        do this.skipValue(depth + 1);
        while (this.take(COMMA));
        this.expect(CLOSE_BRACKET);
      }
      return;
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.skipNumber();
    if (this.literal("true") || this.literal("false") || this.literal("null"))
      return;
    throw FALLBACK;
  }

  literal(word: string): boolean {
    const b = this.b;
    const p = this.pos;
    for (let i = 0; i < word.length; i++)
      if (b[p + i] !== word.charCodeAt(i)) return false;
    this.pos = p + word.length;
    return true;
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  skipNumber(): void {
    const b = this.b;
    let p = this.pos;
    if (b[p] === MINUS) p++;
    if (b[p] === ZERO) p++;
    else p = this.digits(p);
    if (b[p] === DOT) p = this.digits(p + 1);
    const e = b[p];
    if (e === 0x65 || e === 0x45) {
      p++;
      const s = b[p];
      if (s === PLUS || s === MINUS) p++;
      p = this.digits(p);
    }
    this.pos = p;
  }

  /** One or more digits from `p`; the position after them. */
  digits(p: number): number {
    const b = this.b;
    const start = p;
    while (p < this.end) {
      const c = b[p] as number;
      if (c < ZERO || c > NINE) break;
      p++;
    }
    if (p === start) throw FALLBACK;
    return p;
  }

  /**
   * A key of an object the row reads: the member it names in `known`, undefined for another
   * one. A known key seen before (its bit in `seen`) makes the record ambiguous. The members are
   * tried from the one after the last found (`seen.next`): a service writes them in one order,
   * so the first one tried is the key most of the time. A member matches when its name's bytes
   * are followed by the closing quote; the name holds no quote nor backslash, so that quote
   * closes the key, which has no escape.
   */
  key(known: Members, seen: Seen): Member | undefined {
    if (this.peek() !== QUOTE) throw FALLBACK;
    const b = this.b;
    const start = this.pos + 1;
    const count = known.length;
    let at = seen.next;
    for (let tried = 0; tried < count; tried++, at++) {
      if (at === count) at = 0;
      const m = known[at] as Member;
      const k = m.bytes;
      const length = k.length;
      if (b[start + length] !== QUOTE) continue;
      let i = 0;
      while (i < length && b[start + i] === k[i]) i++;
      if (i < length) continue;
      this.stringStart = start;
      this.keyEnd = start + length;
      this.pos = start + length + 1;
      this.expect(COLON);
      if ((seen.bits & m.bit) !== 0) this.ambiguous ??= m.path;
      seen.bits |= m.bit;
      seen.next = at + 1;
      return m;
    }
    this.keyEnd = this.string(true);
    this.expect(COLON);
    return undefined;
  }

  /** An object whose known members must be strings or arrays of strings; others anything. */
  flat(depth: number, known: Members): void {
    if (this.peek() !== OPEN_BRACE) throw FALLBACK;
    if (!this.enter(depth, CLOSE_BRACE)) return;
    const seen: Seen = { bits: 0, next: 0 };
    do {
      const m = this.key(known, seen);
      if (m === undefined) this.skipValue(depth + 1);
      else if (m.is === Is.Strs) this.stringArray();
      else this.string(false);
    } while (this.take(COMMA));
    this.expect(CLOSE_BRACE);
  }

  stringArray(): void {
    this.expect(OPEN_BRACKET);
    if (this.take(CLOSE_BRACKET)) return;
    do this.string(false);
    while (this.take(COMMA));
    this.expect(CLOSE_BRACKET);
  }

  /**
   * The user member; returns the name of its brand member. A member other than type, username
   * and native that is an object holding `user` or `endUser` is an identity holder; `service`
   * wins, else the first (see findBrandKey). Every holder's identities must have the shape.
   * Any member named twice makes the record ambiguous: one may be the brand member, the other
   * not.
   */
  user(depth: number): string | undefined {
    if (this.peek() !== OPEN_BRACE) throw FALLBACK;
    if (!this.enter(depth, CLOSE_BRACE)) return undefined;
    let brand: string | undefined;
    const seen: Seen = { bits: 0, next: 0 };
    // Names of the other members, decoded: an identity holder's name is the brand member's.
    const others: string[] = [];
    do {
      const m = this.key(USER, seen);
      if (m !== undefined) {
        if (m.flat === undefined) this.string(false);
        else this.flat(depth + 1, m.flat);
        continue;
      }
      const key = this.otherKey();
      if (others.includes(key)) this.ambiguous ??= `user.${key}`;
      others.push(key);
      if (this.peek() !== OPEN_BRACE) this.skipValue(depth + 1);
      else {
        // An array index as a key would come first in JavaScript: parseSession decides.
        if (isDigit(key.charCodeAt(0)) && ARRAY_INDEX.test(key)) throw FALLBACK;
        if (
          this.holder(depth + 1) &&
          (key === "service" || brand === undefined)
        )
          brand = key;
      }
    } while (this.take(COMMA));
    this.expect(CLOSE_BRACE);
    return brand;
  }

  /**
   * The key just read by `key` (one `user` does not declare), decoded. Records of one service
   * name the same brand member again and again: when the key's bytes are those of the last one
   * decoded, that string is returned instead of decoding them again.
   */
  otherKey(): string {
    const b = this.b;
    const start = this.stringStart;
    const length = this.keyEnd - start;
    const last = lastOtherKey.bytes;
    if (length === last.length) {
      let i = 0;
      while (i < length && b[start + i] === last[i]) i++;
      if (i === length) return lastOtherKey.text;
    }
    const text = b.toString("utf8", start, this.keyEnd);
    // Kept only while short: a key is copied to be compared, not held whole.
    if (length <= MAX_CACHED_KEY_BYTES)
      lastOtherKey = {
        bytes: Buffer.from(b.subarray(start, this.keyEnd)),
        text,
      };
    return text;
  }

  /** An object member of `user`; whether it holds `user` or `endUser` (identities). */
  holder(depth: number): boolean {
    if (!this.enter(depth, CLOSE_BRACE)) return false;
    const seen: Seen = { bits: 0, next: 0 };
    let holds = false;
    do {
      const m = this.key(HOLDER, seen);
      if (m === undefined) this.skipValue(depth + 1);
      else {
        holds = true;
        this.flat(depth + 1, IDENTITY);
      }
    } while (this.take(COMMA));
    this.expect(CLOSE_BRACE);
    return holds;
  }

  /** `n` digits at `at` as a number; NaN when one is not a digit. */
  number(at: number, n: number): number {
    const b = this.b;
    let x = 0;
    for (let i = at; i < at + n; i++) {
      const c = b[i] as number;
      if (c < ZERO || c > NINE) return NaN;
      x = 10 * x + c - ZERO;
    }
    return x;
  }

  /**
   * Epoch milliseconds of the day written at `s` (YYYY-MM-DD), NaN for a day no calendar has or
   * a year before 1000. Records of one page mostly share their day: when its ten bytes are those
   * of the last day read, that day's value is returned without reading it again.
   */
  day(s: number): number {
    const b = this.b;
    const last = lastDay.bytes;
    let i = 0;
    while (i < DAY_BYTES && b[s + i] === last[i]) i++;
    if (i === DAY_BYTES) return lastDay.ms;
    if (b[s + 4] !== MINUS || b[s + 7] !== MINUS) return NaN;
    const year = this.number(s, 4);
    const month = this.number(s + 5, 2);
    const day = this.number(s + 8, 2);
    // Comparisons with NaN are false: a field that is not digits fails here.
    if (!(year >= 1000 && month >= 1 && month <= 12 && day >= 1)) return NaN;
    if (!(day <= daysInMonth(year, month))) return NaN;
    const ms = daysFromCivil(year, month, day) * 86_400_000;
    lastDay = { bytes: Buffer.from(b.subarray(s, s + DAY_BYTES)), ms };
    return ms;
  }

  /**
   * An RFC 3339 timestamp (as isTimestamp: 0 to 9 fractional digits, `Z` or an offset, either
   * case), read in place as epoch milliseconds. NaN for anything else, for a day or time no
   * calendar has and for a year before 1000: parseSession and sessionValueProblem name those.
   */
  timestamp(): number {
    const close = this.string(true);
    const b = this.b;
    const s = this.stringStart;
    if (
      close - s < 20 ||
      ((b[s + 10] as number) | LOWER) !== LOWER_T ||
      b[s + 13] !== COLON ||
      b[s + 16] !== COLON
    )
      return NaN;
    const dayMs = this.day(s);
    const hour = this.number(s + 11, 2);
    const minute = this.number(s + 14, 2);
    const second = this.number(s + 17, 2);
    if (!(hour <= 23 && minute <= 59 && second <= 59)) return NaN;
    let p = s + 19;
    let ms = 0;
    if (b[p] === DOT) {
      const from = ++p;
      while (p < close && isDigit(b[p])) p++;
      const n = p - from;
      if (n < 1 || n > 9) return NaN;
      // Digits past the third are truncated, as timestampMs does.
      ms =
        n >= 3
          ? this.number(from, 3)
          : this.number(from, n) * (n === 1 ? 100 : 10);
    }
    let offsetMs = 0;
    const zone = b[p] as number;
    if ((zone | LOWER) === LOWER_Z) p++;
    else if (zone === PLUS || zone === MINUS) {
      const hours = this.number(p + 1, 2);
      const minutes = this.number(p + 4, 2);
      if (b[p + 3] !== COLON || !(hours <= 23 && minutes <= 59)) return NaN;
      offsetMs = (zone === MINUS ? -1 : 1) * (hours * 60 + minutes) * 60_000;
      p += 6;
    } else return NaN;
    if (p !== close) return NaN;
    return dayMs + ((hour * 60 + minute) * 60 + second) * 1000 + ms - offsetMs;
  }

  /**
   * Whether a protobuf Duration ("12.5s") is of the plain form, checked in place: empty, or
   * whole seconds of at most DURATION_SECOND_DIGITS digits with up to nine fractional ones. A
   * negative or longer one, or one with spaces, is left to parseSession and sessionValueProblem.
   */
  duration(): boolean {
    const close = this.string(true);
    const b = this.b;
    let p = this.stringStart;
    if (p === close) return true;
    const from = p;
    while (isDigit(b[p])) p++;
    if (p === from || p - from > DURATION_SECOND_DIGITS) return false;
    if (b[p] === DOT) {
      const fraction = ++p;
      while (isDigit(b[p])) p++;
      if (p === fraction || p - fraction > 9) return false;
    }
    return b[p] === LOWER_S && p + 1 === close;
  }

  session(): ScanFinding {
    let id: string | undefined;
    let startMs: number | undefined;
    let endMs: number | undefined;
    let plainDuration = true;
    let brandMember: string | undefined;
    this.expect(OPEN_BRACE);
    if (!this.take(CLOSE_BRACE)) {
      const seen: Seen = { bits: 0, next: 0 };
      do {
        const m = this.key(TOP, seen);
        if (m === undefined) this.skipValue(1);
        else if (m.is === Is.Str) this.string(false);
        else if (m.flat !== undefined) this.flat(1, m.flat);
        // The members read for their values; the one left is `user`.
        else if (m.name === "id") id = this.plainString();
        else if (m.name === "startTime") startMs = this.timestamp();
        else if (m.name === "endTime") endMs = this.timestamp();
        else if (m.name === "duration") plainDuration = this.duration();
        else brandMember = this.user(1);
      } while (this.take(COMMA));
      this.expect(CLOSE_BRACE);
    }
    if (this.ambiguous !== undefined) return { ambiguous: this.ambiguous };
    if (id === undefined || id === "" || startMs === undefined) throw FALLBACK;
    if (Number.isNaN(startMs) || Number.isNaN(endMs) || !plainDuration)
      throw FALLBACK;
    return { id, startMs, endMs, brandMember };
  }
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (as Date.UTC counts them,
 * without building a Date): eras of 400 years, March-based years so that leap days come last.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear =
    Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 +
    Math.floor(yearOfEra / 4) -
    Math.floor(yearOfEra / 100) +
    dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function isHex(c: number | undefined): boolean {
  return (
    c !== undefined &&
    ((c >= ZERO && c <= NINE) ||
      (c >= 0x61 && c <= 0x66) ||
      (c >= 0x41 && c <= 0x46))
  );
}

/** Scans a session record's bytes (see the top of this file): nothing may follow the record. */
export function scanSession(bytes: Buffer): SessionScan {
  const read = scanSessionAt(bytes, 0);
  if (read === undefined) return undefined;
  return new Scanner(bytes, read.end).peek() === -1 ? read.value : undefined;
}

/**
 * Scans a session record that starts at `start` in `buf` (an element of a page being split),
 * as scanSession does: where it ends (the index after its closing brace) and what the scan
 * found. Undefined when the scan leaves the record to parseSession, and when the record does
 * not end within `buf`: the page's splitter then finds its end, and scanSession sees it again.
 */
export function scanSessionAt(
  buf: Buffer,
  start: number,
): { end: number; value: ScanFinding } | undefined {
  try {
    const scanner = new Scanner(buf, start);
    const value = scanner.session();
    return { end: scanner.pos, value };
  } catch (err) {
    if (err === FALLBACK) return undefined;
    throw err;
  }
}
