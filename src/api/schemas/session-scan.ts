// The fastest check of a session record: one pass over its text, no object built. The engine
// builds the row from the text itself, so the exporter needs only to know that the record has
// the shape the schema accepts, and the few values the writer reads (the id, the times, the
// name of the brand member). The scan accepts only the plain, expected shape — valid JSON, every
// member the row is built from a string (or the object or array of strings it must be), no
// escapes in the values it returns, nesting within bounds — and returns undefined for anything
// else, which then goes through JSON.parse and parseSession, which decide (and explain a
// rejection). So the scan never accepts what the schema rejects: test/api/session-scan.test.ts
// holds the two equal on the simulator's records broken at random.
import { durationStringMs, isTimestamp } from "./common.js";

/** What the writer reads of a record the scan accepted. */
export interface ScannedSession {
  id: string;
  startTime: string;
  /** Undefined when the record has none (an open session). */
  endTime: string | undefined;
  /** "" when the record has none. */
  duration: string;
  /** The member holding the identities (see findBrandKey), undefined when there is none. */
  brandMember: string | undefined;
}

/**
 * The scan's answer: the values of a record of the expected shape; `{ ambiguous }` for a record
 * that names a member the row is built from twice (JSON readers disagree on which one counts:
 * the engine reads the first, JavaScript the last), which is kept as a dead letter with that
 * reason; undefined for anything else (parseSession decides).
 */
export type SessionScan = ScannedSession | { ambiguous: string } | undefined;

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

/** The members of the objects the row reads, with what each must be. */
const NETWORK = new Set(["clientIpAddress", "serverIpAddress"]);
const SIDECAR = new Set(["id", "name", "technology"]);
const RESOURCE = new Set(["type", "id", "name", "technology"]);
const CONNECTOR = new Set(["id", "name"]);
const NATIVE = new Set(["username"]);
const IDENTITY_STRINGS = new Set(["id", "name", "email", "type"]);
const IDENTITY_ARRAYS = new Set(["groups", "externalIds"]);

class Scanner {
  readonly t: string;
  pos = 0;
  ambiguous: string | undefined;

  constructor(text: string) {
    this.t = text;
  }

  ws(): void {
    const t = this.t;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  expect(code: number): void {
    this.ws();
    if (this.t.charCodeAt(this.pos) !== code) throw FALLBACK;
    this.pos++;
  }

  /** Whether the next character (after whitespace) is `code`; consumes it if so. */
  take(code: number): boolean {
    this.ws();
    if (this.t.charCodeAt(this.pos) !== code) return false;
    this.pos++;
    return true;
  }

  peek(): number {
    this.ws();
    return this.t.charCodeAt(this.pos);
  }

  /** A string without escapes, as its value; a string with escapes goes to parseSession. */
  plainString(): string {
    this.expect(QUOTE);
    const t = this.t;
    const start = this.pos;
    let p = start;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === QUOTE) break;
      if (c === BACKSLASH || c < 0x20 || Number.isNaN(c)) throw FALLBACK;
      p++;
    }
    this.pos = p + 1;
    return t.slice(start, p);
  }

  /** Any valid JSON string, skipped. */
  skipString(): void {
    this.expect(QUOTE);
    const t = this.t;
    let p = this.pos;
    for (;;) {
      const c = t.charCodeAt(p);
      if (c === QUOTE) break;
      if (c < 0x20 || Number.isNaN(c)) throw FALLBACK;
      if (c === BACKSLASH) {
        const e = t.charCodeAt(p + 1);
        if (e === 0x75) {
          for (let i = p + 2; i < p + 6; i++)
            if (!isHex(t.charCodeAt(i))) throw FALLBACK;
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
  }

  /** Any valid JSON value, skipped. */
  skipValue(depth: number): void {
    const c = this.peek();
    if (c === QUOTE) return this.skipString();
    if (c === OPEN_BRACE) {
      if (depth >= MAX_DEPTH) throw FALLBACK;
      this.pos++;
      if (this.take(CLOSE_BRACE)) return;
      do {
        this.skipString();
        this.expect(COLON);
        this.skipValue(depth + 1);
      } while (this.take(COMMA));
      this.expect(CLOSE_BRACE);
      return;
    }
    if (c === OPEN_BRACKET) {
      if (depth >= MAX_DEPTH) throw FALLBACK;
      this.pos++;
      if (this.take(CLOSE_BRACKET)) return;
      do this.skipValue(depth + 1);
      while (this.take(COMMA));
      this.expect(CLOSE_BRACKET);
      return;
    }
    if (c === MINUS || (c >= ZERO && c <= NINE)) return this.skipNumber();
    if (this.t.startsWith("true", this.pos)) this.pos += 4;
    else if (this.t.startsWith("false", this.pos)) this.pos += 5;
    else if (this.t.startsWith("null", this.pos)) this.pos += 4;
    else throw FALLBACK;
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  skipNumber(): void {
    const t = this.t;
    let p = this.pos;
    if (t.charCodeAt(p) === MINUS) p++;
    if (t.charCodeAt(p) === ZERO) p++;
    else p = digits(t, p);
    if (t.charCodeAt(p) === DOT) p = digits(t, p + 1);
    const e = t.charCodeAt(p);
    if (e === 0x65 || e === 0x45) {
      p++;
      const s = t.charCodeAt(p);
      if (s === PLUS || s === MINUS) p++;
      p = digits(t, p);
    }
    this.pos = p;
  }

  /**
   * The members of an object, each handed to `member` with its key (keys with escapes go to
   * parseSession); a key of `watched` seen twice makes the record ambiguous.
   */
  object(
    depth: number,
    watched: ReadonlySet<string> | "all",
    member: (key: string) => void,
  ): void {
    if (depth >= MAX_DEPTH) throw FALLBACK;
    this.expect(OPEN_BRACE);
    if (this.take(CLOSE_BRACE)) return;
    let seen: string[] | undefined;
    do {
      const key = this.plainString();
      this.expect(COLON);
      if (watched === "all" || watched.has(key)) {
        seen ??= [];
        if (seen.includes(key)) this.ambiguous ??= key;
        seen.push(key);
      }
      member(key);
    } while (this.take(COMMA));
    this.expect(CLOSE_BRACE);
  }

  /** An object whose `strings` members, when present, are strings; others anything. */
  stringsObject(depth: number, strings: ReadonlySet<string>): void {
    if (this.peek() !== OPEN_BRACE) throw FALLBACK;
    this.object(depth, strings, (key) => {
      if (strings.has(key)) this.skipPlainTyped();
      else this.skipValue(depth + 1);
    });
  }

  /** A string where the schema wants one (a null or a number goes to parseSession). */
  skipPlainTyped(): void {
    if (this.peek() !== QUOTE) throw FALLBACK;
    this.skipString();
  }

  /** An array of strings. */
  stringArray(): void {
    this.expect(OPEN_BRACKET);
    if (this.take(CLOSE_BRACKET)) return;
    do this.skipPlainTyped();
    while (this.take(COMMA));
    this.expect(CLOSE_BRACKET);
  }

  identity(depth: number): void {
    if (this.peek() !== OPEN_BRACE) throw FALLBACK;
    this.object(depth, IDENTITY_WATCHED, (key) => {
      if (IDENTITY_STRINGS.has(key)) this.skipPlainTyped();
      else if (IDENTITY_ARRAYS.has(key)) this.stringArray();
      else this.skipValue(depth + 1);
    });
  }

  /**
   * The user member; returns the name of its brand member. A member other than type, username
   * and native that is an object holding `user` or `endUser` is an identity holder; `service`
   * wins, else the first (see findBrandKey). Every holder's identities must have the shape.
   */
  user(depth: number): string | undefined {
    if (this.peek() !== OPEN_BRACE) throw FALLBACK;
    let brand: string | undefined;
    // Any member named twice: one of them may be the brand member, the other not.
    this.object(depth, "all", (key) => {
      if (key === "type" || key === "username") return this.skipPlainTyped();
      if (key === "native") return this.stringsObject(depth + 1, NATIVE);
      if (this.peek() !== OPEN_BRACE) return this.skipValue(depth + 1);
      // An array index as a key would be ordered first by JavaScript: parseSession decides.
      if (/^(?:0|[1-9]\d*)$/.test(key)) throw FALLBACK;
      let holds = false;
      this.object(depth + 1, HOLDER_WATCHED, (inner) => {
        if (inner === "user" || inner === "endUser") {
          holds = true;
          this.identity(depth + 2);
        } else this.skipValue(depth + 2);
      });
      if (holds && (key === "service" || brand === undefined)) brand = key;
    });
    return brand;
  }

  session(): SessionScan {
    let id: string | undefined;
    let startTime: string | undefined;
    let endTime: string | undefined;
    let duration = "";
    let brandMember: string | undefined;
    this.object(0, TOP_WATCHED, (key) => {
      switch (key) {
        case "id":
          id = this.plainString();
          return;
        case "startTime":
          startTime = this.plainString();
          return;
        case "endTime":
          endTime = this.plainString();
          return;
        case "duration":
          duration = this.plainString();
          return;
        case "sessionStatus":
        case "parentSessionId":
          return this.skipPlainTyped();
        case "network":
          return this.stringsObject(1, NETWORK);
        case "sidecar":
          return this.stringsObject(1, SIDECAR);
        case "resource":
          return this.stringsObject(1, RESOURCE);
        case "connector":
          return this.stringsObject(1, CONNECTOR);
        case "user":
          brandMember = this.user(1);
          return;
        default:
          this.skipValue(1);
      }
    });
    this.ws();
    if (this.pos !== this.t.length) throw FALLBACK;
    if (this.ambiguous !== undefined) return { ambiguous: this.ambiguous };
    if (id === undefined || id === "" || startTime === undefined)
      throw FALLBACK;
    if (!isTimestamp(startTime)) throw FALLBACK;
    if (endTime !== undefined && !isTimestamp(endTime)) throw FALLBACK;
    if (duration !== "" && durationStringMs(duration) === undefined)
      throw FALLBACK;
    return { id, startTime, endTime, duration, brandMember };
  }
}

const TOP_WATCHED = new Set([
  "id",
  "startTime",
  "endTime",
  "duration",
  "sessionStatus",
  "parentSessionId",
  "network",
  "sidecar",
  "resource",
  "connector",
  "user",
]);
const HOLDER_WATCHED = new Set(["user", "endUser"]);
const IDENTITY_WATCHED = new Set([...IDENTITY_STRINGS, ...IDENTITY_ARRAYS]);

function isHex(c: number): boolean {
  return (
    (c >= ZERO && c <= NINE) ||
    (c >= 0x61 && c <= 0x66) ||
    (c >= 0x41 && c <= 0x46)
  );
}

/** One or more digits from `p`; the position after them. */
function digits(t: string, p: number): number {
  const start = p;
  for (;;) {
    const c = t.charCodeAt(p);
    if (c < ZERO || c > NINE || Number.isNaN(c)) break;
    p++;
  }
  if (p === start) throw FALLBACK;
  return p;
}

/** Scans a session record's text (see the top of this file). */
export function scanSession(text: string): SessionScan {
  try {
    return new Scanner(text).session();
  } catch (err) {
    if (err === FALLBACK) return undefined;
    throw err;
  }
}
