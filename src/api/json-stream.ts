// Splits a JSON response such as `{"sessions":[{…},{…}],"listMetadata":{…}}` into the raw bytes
// of each element of one array member, as the bytes arrive. A 100000-session page (~100 MB) is
// never held as one string nor as one object graph: each element is cut out as its exact bytes
// (kept as the raw record, never decoded unless someone asks for its text) and checked on its
// own. The scanner only tracks nesting and strings; inside strings it jumps with indexOf, so it
// costs a fraction of a parse. Given an ElementReader, the splitter lets it read each element
// where it lies, finding its end in the same pass, and scans only what the reader does not take.
// Other top-level members are parsed whole (they are small).
// An element larger than the record limit is not held: its first bytes are kept and the rest is
// scanned past; an element that is not valid UTF-8 is handed over as its exact bytes.
import { isUtf8 } from "node:buffer";
import { parseExactJson } from "./exact-json.js";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Bytes of an oversized element kept for its dead letter. */
const OVERSIZED_PREFIX_BYTES = 2 ** 20;

const enum Mode {
  ObjectStart,
  KeyOrEnd,
  Colon,
  ValueStart,
  Value,
  ArrayItemOrEnd,
  Item,
  Done,
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class JsonShapeError extends Error {
  /** `incomplete`: the body ended early; `shape`: the bytes are not the expected JSON object. */
  readonly kind: "incomplete" | "shape";
  constructor(message: string, kind: "incomplete" | "shape" = "shape") {
    super(message);
    this.name = "JsonShapeError";
    this.kind = kind;
  }
}

/** An element that cannot be handed over as text. */
export interface BrokenElement {
  /** `invalid-utf8`: `bytes` are the element's exact bytes; `too-large`: its first bytes. */
  problem: "invalid-utf8" | "too-large";
  bytes: Buffer;
  /** The element's full size in bytes. */
  size: number;
}

/** An element an ElementReader read where it lay: its exact bytes and what the reader found. */
export interface ReadElement<T> {
  bytes: Buffer;
  value: T;
}

/**
 * Reads an element that starts at `start` in `buf` in the same pass that finds its end (the
 * index after it), for elements of the shape it expects; undefined for anything else, and for an
 * element that does not end within `buf`: the splitter then finds the end itself and hands over
 * the bytes alone.
 */
export type ElementReader<T> = (
  buf: Buffer,
  start: number,
) => { end: number; value: T } | undefined;

/**
 * One array element: its exact bytes (valid UTF-8; a view of the response's own buffer, never
 * written again), those bytes with what a reader found in them, or why it cannot be handed over
 * as such.
 */
export type SplitElement<T = never> = Buffer | BrokenElement | ReadElement<T>;

/** Whether index `i` of `buf` is where a UTF-8 character begins (or the buffer's end). */
function boundary(buf: Buffer, i: number): boolean {
  return i >= buf.length || ((buf[i] as number) & 0xc0) !== 0x80;
}

export class ArrayMemberSplitter<T = never> {
  readonly #member: string;
  readonly #maxElementBytes: number;
  readonly #reader: ElementReader<T> | undefined;
  /** First bytes of the element being scanned past, once it is larger than the limit. */
  #oversized: Buffer[] | undefined;
  #oversizedBytes = 0;
  /** Bytes of the oversized element already dropped from the buffer. */
  #dropped = 0;
  #buf: Buffer = Buffer.alloc(0);
  #pos = 0;
  /** Start of the token being scanned (a key, a member value or an array element). */
  #start = 0;
  #mode: Mode = Mode.ObjectStart;
  #key = "";
  #nest = 0;
  #inString = false;
  /**
   * Backslashes that end the bytes before `#buf` while a string is scanned in it alone (see
   * #finishElement); 0 when `#buf` holds everything scanned.
   */
  #carriedSlashes = 0;
  #sawMember = false;
  /**
   * The range of `#utf8Buf` known to be valid UTF-8 (see #utf8): [#utf8From, #utf8To), or, with
   * #utf8To -1, a buffer whose elements from #utf8From on are checked one by one.
   */
  #utf8Buf: Buffer | undefined;
  #utf8From = 0;
  #utf8To = 0;
  /** Members other than the split one, parsed. */
  readonly others: Record<string, unknown> = {};
  /** Bytes seen so far. */
  bytes = 0;

  constructor(
    member: string,
    maxElementBytes = Number.MAX_SAFE_INTEGER,
    reader?: ElementReader<T>,
  ) {
    this.#member = member;
    this.#maxElementBytes = maxElementBytes;
    this.#reader = reader;
  }

  /** Feeds a chunk; returns every element completed by it. */
  push(chunk: Buffer): SplitElement<T>[] {
    this.bytes += chunk.length;
    const out: SplitElement<T>[] = [];
    // Keep only the unfinished token, so memory is bounded by the largest element.
    const keep = this.#buf.subarray(this.#start);
    if (
      keep.length > 0 &&
      this.#mode === Mode.Item &&
      this.#oversized === undefined &&
      this.#finishElement(keep, chunk, out)
    ) {
      this.#scan(out);
      return out;
    }
    this.#pos -= this.#start;
    this.#start = 0;
    this.#buf = keep.length === 0 ? chunk : Buffer.concat([keep, chunk]);
    this.#scan(out);
    return out;
  }

  /**
   * An element cut by the previous chunk's edge (`held`, scanned to its end): when it ends in
   * `chunk`, hands it over, joined from its two parts, and leaves the rest of the chunk to be
   * scanned where it lies, so that only the element is copied, not the chunk. False, with
   * nothing changed, when it does not end in the chunk.
   */
  #finishElement(held: Buffer, chunk: Buffer, out: SplitElement<T>[]): boolean {
    const nest = this.#nest;
    const inString = this.#inString;
    // Backslashes at the end of the held part escape what begins the chunk.
    let slashes = 0;
    if (inString)
      for (let k = held.length - 1; k >= 0 && held[k] === BACKSLASH; k--)
        slashes++;
    this.#carriedSlashes = slashes;
    const end = this.#valueEnd(chunk, 0);
    this.#carriedSlashes = 0;
    if (end < 0) {
      this.#nest = nest;
      this.#inString = inString;
      return false;
    }
    this.#buf = Buffer.concat([held, chunk.subarray(0, end)]);
    this.#start = 0;
    out.push(this.#element(this.#buf, this.#buf.length));
    this.#mode = Mode.ArrayItemOrEnd;
    this.#buf = chunk;
    this.#pos = end;
    this.#start = end;
    return true;
  }

  /** Call when the body ended; throws when the JSON was cut off. */
  end(): void {
    if (this.#mode !== Mode.Done) {
      throw new JsonShapeError(
        `response body ended early (after ${this.bytes} bytes): the JSON is incomplete`,
        "incomplete",
      );
    }
  }

  /** True when the member to split was present in the body. */
  get sawMember(): boolean {
    return this.#sawMember;
  }

  // Whole: the hot-path state machine over the body's bytes, one case per Mode.
  #scan(out: SplitElement<T>[]): void {
    const buf = this.#buf;
    const len = buf.length;
    let pos = this.#pos;
    let past: number;
    while (pos < len) {
      const c = buf[pos] as number;
      switch (this.#mode) {
        case Mode.ObjectStart:
          if (isSpace(c)) pos++;
          else if (c === OPEN_BRACE) {
            this.#mode = Mode.KeyOrEnd;
            pos++;
            this.#start = pos;
          } else throw new JsonShapeError("response body is not a JSON object");
          break;
        case Mode.KeyOrEnd:
          past = this.#pastSeparator(c, pos, CLOSE_BRACE, Mode.Done);
          if (past >= 0) pos = past;
          else if (c === QUOTE) {
            const close = this.#stringEnd(buf, pos + 1);
            if (close < 0) {
              this.#pos = pos;
              return;
            }
            this.#key = parseMember(
              buf.toString("utf8", pos, close + 1),
            ) as string;
            this.#mode = Mode.Colon;
            pos = close + 1;
          } else
            throw new JsonShapeError(
              `unexpected byte ${String.fromCharCode(c)} where a member name belongs`,
            );
          break;
        case Mode.Colon:
          if (isSpace(c)) pos++;
          else if (c === COLON) {
            this.#mode = Mode.ValueStart;
            pos++;
          } else throw new JsonShapeError("expected ':' after a member name");
          break;
        case Mode.ValueStart:
          if (isSpace(c)) pos++;
          else if (c === CLOSE_BRACE || c === CLOSE_BRACKET)
            throw misplacedClose(c);
          else if (this.#key === this.#member && c === OPEN_BRACKET) {
            this.#sawMember = true;
            this.#mode = Mode.ArrayItemOrEnd;
            pos++;
            this.#start = pos;
          } else this.#beginValue(Mode.Value, pos);
          break;
        case Mode.Value:
        case Mode.Item: {
          const end = this.#valueEnd(buf, pos);
          if (end < 0) {
            if (this.#mode === Mode.Item) this.#boundElement(buf);
            this.#pos = len;
            return;
          }
          if (this.#mode === Mode.Item) {
            out.push(this.#element(buf, end));
            this.#mode = Mode.ArrayItemOrEnd;
          } else {
            this.others[this.#key] = parseMember(
              buf.toString("utf8", this.#start, end),
            );
            this.#mode = Mode.KeyOrEnd;
          }
          pos = end;
          this.#start = pos;
          break;
        }
        case Mode.ArrayItemOrEnd:
          past = this.#pastSeparator(c, pos, CLOSE_BRACKET, Mode.KeyOrEnd);
          if (past >= 0) pos = past;
          else if (c === CLOSE_BRACE) {
            throw misplacedClose(c);
          } else {
            const read = this.#read(buf, pos);
            if (read !== undefined) {
              out.push(read);
              pos += read.bytes.length;
              this.#start = pos;
              break;
            }
            this.#beginValue(Mode.Item, pos);
          }
          break;
        case Mode.Done:
          if (isSpace(c)) {
            pos++;
            this.#start = pos;
          } else
            throw new JsonShapeError(
              "unexpected data after the end of the JSON object",
            );
          break;
      }
    }
    this.#pos = pos;
  }

  /** Starts scanning a member value or an array element (`mode`) at `pos`. */
  #beginValue(mode: Mode.Value | Mode.Item, pos: number): void {
    this.#mode = mode;
    this.#start = pos;
    this.#nest = 0;
    this.#inString = false;
  }

  /**
   * Passes over `c` at `pos` when it lies between members or elements: a space, a comma, or
   * the container's `close` (then the scan goes on in `after`). Returns the position after it
   * (where the next value starts), or -1 when `c` is none of those.
   */
  #pastSeparator(c: number, pos: number, close: number, after: Mode): number {
    if (c === close) this.#mode = after;
    else if (!isSpace(c) && c !== COMMA) return -1;
    this.#start = pos + 1;
    return pos + 1;
  }

  /** The element at `start` as the reader reads it, if it does and the element is fit to hand over. */
  #read(buf: Buffer, start: number): ReadElement<T> | undefined {
    const read = this.#reader?.(buf, start);
    if (read === undefined || read.end - start > this.#maxElementBytes)
      return undefined;
    const bytes = buf.subarray(start, read.end);
    return this.#utf8(buf, start, read.end)
      ? { bytes, value: read.value }
      : undefined;
  }

  /**
   * Whether buf[start, end) is valid UTF-8. The first element read in a buffer has the rest of
   * the buffer checked with it, up to its last ASCII byte (bytes after it may be a character
   * cut by the chunk's end): a later element read within that valid range that starts and ends
   * on a character's boundary (a record starts and ends with an ASCII byte) is valid as well,
   * without a check of its own. Once that range is not valid, each element of the buffer is
   * checked alone.
   */
  #utf8(buf: Buffer, start: number, end: number): boolean {
    if (buf === this.#utf8Buf && start >= this.#utf8From) {
      if (end <= this.#utf8To && boundary(buf, start) && boundary(buf, end))
        return true;
      if (this.#utf8To < 0) return isUtf8(buf.subarray(start, end));
    }
    let stop = buf.length;
    while (stop > end && (buf[stop - 1] as number) >= 0x80) stop--;
    this.#utf8Buf = buf;
    this.#utf8From = start;
    if (isUtf8(buf.subarray(start, stop))) {
      this.#utf8To = stop;
      return true;
    }
    this.#utf8To = -1;
    return isUtf8(buf.subarray(start, end));
  }

  /** The element in buf[#start, end), with what was dropped of it before. */
  #element(buf: Buffer, end: number): Buffer | BrokenElement {
    const size = this.#dropped + (end - this.#start);
    const oversized = this.#oversized;
    if (oversized) {
      this.#keepPrefix(buf, end);
      const bytes = Buffer.concat(oversized);
      this.#oversized = undefined;
      this.#oversizedBytes = 0;
      this.#dropped = 0;
      return { problem: "too-large", bytes, size };
    }
    if (size > this.#maxElementBytes) {
      const keep = Math.min(size, OVERSIZED_PREFIX_BYTES);
      return {
        problem: "too-large",
        bytes: Buffer.from(buf.subarray(this.#start, this.#start + keep)),
        size,
      };
    }
    const bytes = buf.subarray(this.#start, end);
    if (!isUtf8(bytes))
      return { problem: "invalid-utf8", bytes: Buffer.from(bytes), size };
    return bytes;
  }

  /**
   * Called when an element is still incomplete at the end of the buffer: once it is larger than
   * the limit, its first bytes are kept and the rest is dropped as it is scanned, so memory
   * stays bounded. A run of backslashes at the end is kept: the string scan looks back over it.
   */
  #boundElement(buf: Buffer): void {
    const held = buf.length - this.#start;
    if (this.#oversized === undefined) {
      if (held <= this.#maxElementBytes) return;
      this.#oversized = [];
    }
    let cut = buf.length;
    while (cut > this.#start && buf[cut - 1] === BACKSLASH) cut--;
    this.#keepPrefix(buf, cut);
    this.#dropped += cut - this.#start;
    this.#start = cut;
  }

  /** Adds buf[#start, end) to the kept first bytes of an oversized element, up to their limit. */
  #keepPrefix(buf: Buffer, end: number): void {
    const room = OVERSIZED_PREFIX_BYTES - this.#oversizedBytes;
    if (room <= 0 || end <= this.#start) return;
    const part = Buffer.from(
      buf.subarray(this.#start, Math.min(end, this.#start + room)),
    );
    this.#oversized?.push(part);
    this.#oversizedBytes += part.length;
  }

  /** Index of the closing quote of a string whose content starts at `from`, or -1. */
  #stringEnd(buf: Buffer, from: number): number {
    let q = buf.indexOf(QUOTE, from);
    while (q >= 0) {
      let slashes = 0;
      // Walk back over escapes; this may cross the previous chunk's edge, which is still held
      // (or counted in #carriedSlashes when it is not).
      let k = q - 1;
      for (; k >= 0 && buf[k] === BACKSLASH; k--) slashes++;
      if (k < 0) slashes += this.#carriedSlashes;
      if (slashes % 2 === 0) return q;
      q = buf.indexOf(QUOTE, q + 1);
    }
    return -1;
  }

  /**
   * Scans a value from `pos` (its start is this.#start); returns the index just past it, or -1
   * when more bytes are needed (the scan state is kept in #nest/#inString/#pos).
   */
  #valueEnd(buf: Buffer, from: number): number {
    const len = buf.length;
    let pos = from;
    let nest = this.#nest;
    while (pos < len) {
      if (this.#inString) {
        const close = this.#stringEnd(buf, pos);
        if (close < 0) {
          this.#nest = nest;
          return -1;
        }
        this.#inString = false;
        pos = close + 1;
        continue;
      }
      const c = buf[pos] as number;
      if (c === QUOTE) {
        this.#inString = true;
        pos++;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        nest++;
        pos++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (nest === 0) {
          this.#nest = 0;
          return pos; // a scalar ended by its container's close
        }
        nest--;
        pos++;
        if (nest === 0) {
          this.#nest = 0;
          return pos;
        }
      } else if (c === COMMA && nest === 0) {
        this.#nest = 0;
        return pos;
      } else pos++;
    }
    this.#nest = nest;
    return -1;
  }
}

/**
 * A closing brace or bracket where a value begins: the body is not JSON. (Read as the end of an
 * empty value, it would be handed over as empty elements without end.)
 */
function misplacedClose(c: number): JsonShapeError {
  return new JsonShapeError(
    `unexpected '${String.fromCharCode(c)}' where a value belongs: the response is not valid JSON`,
  );
}

/** A member name or a member value other than the split array; a syntax error is a shape error. */
function parseMember(text: string): unknown {
  try {
    return parseExactJson(text);
  } catch (err) {
    throw new JsonShapeError(
      `the response is not valid JSON (${(err as Error).message})`,
    );
  }
}
