// Splits a JSON response such as `{"sessions":[{…},{…}],"listMetadata":{…}}` into the raw text
// of each element of one array member, as the bytes arrive. A 100000-session page (~100 MB) is
// never held as one string nor as one object graph: each element is cut out as its exact text
// (kept as the raw record) and parsed on its own by JSON.parse, which is native speed. The
// scanner only tracks nesting and strings; inside strings it jumps with indexOf, so it costs a
// fraction of the parse. Other top-level members are parsed whole (they are small).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

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
  constructor(message: string) {
    super(message);
    this.name = "JsonShapeError";
  }
}

export class ArrayMemberSplitter {
  readonly #member: string;
  #buf: Buffer = Buffer.alloc(0);
  #pos = 0;
  /** Start of the token being scanned (a key, a member value or an array element). */
  #start = 0;
  #mode: Mode = Mode.ObjectStart;
  #key = "";
  #nest = 0;
  #inString = false;
  #sawMember = false;
  /** Members other than the split one, parsed. */
  readonly others: Record<string, unknown> = {};
  /** Bytes seen so far. */
  bytes = 0;

  constructor(member: string) {
    this.#member = member;
  }

  /** Feeds a chunk; returns the raw text of every element completed by it. */
  push(chunk: Buffer): string[] {
    this.bytes += chunk.length;
    // Keep only the unfinished token, so memory is bounded by the largest element.
    const keep = this.#buf.subarray(this.#start);
    this.#pos -= this.#start;
    this.#start = 0;
    this.#buf = keep.length === 0 ? chunk : Buffer.concat([keep, chunk]);
    const out: string[] = [];
    this.#scan(out);
    return out;
  }

  /** Call when the body ended; throws when the JSON was cut off. */
  end(): void {
    if (this.#mode !== Mode.Done) {
      throw new JsonShapeError(
        `response body ended early (after ${this.bytes} bytes): the JSON is incomplete`,
      );
    }
  }

  /** True when the member to split was present in the body. */
  get sawMember(): boolean {
    return this.#sawMember;
  }

  #scan(out: string[]): void {
    const buf = this.#buf;
    const len = buf.length;
    let pos = this.#pos;
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
          if (isSpace(c) || c === COMMA) {
            pos++;
            this.#start = pos;
          } else if (c === CLOSE_BRACE) {
            this.#mode = Mode.Done;
            pos++;
            this.#start = pos;
          } else if (c === QUOTE) {
            const close = this.#stringEnd(buf, pos + 1);
            if (close < 0) {
              this.#pos = pos;
              return;
            }
            this.#key = JSON.parse(
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
          else if (this.#key === this.#member && c === OPEN_BRACKET) {
            this.#sawMember = true;
            this.#mode = Mode.ArrayItemOrEnd;
            pos++;
            this.#start = pos;
          } else {
            this.#mode = Mode.Value;
            this.#start = pos;
            this.#nest = 0;
            this.#inString = false;
          }
          break;
        case Mode.Value:
        case Mode.Item: {
          const end = this.#valueEnd(buf, pos);
          if (end < 0) {
            this.#pos = len;
            return;
          }
          const text = buf.toString("utf8", this.#start, end);
          if (this.#mode === Mode.Item) {
            out.push(text);
            this.#mode = Mode.ArrayItemOrEnd;
          } else {
            this.others[this.#key] = JSON.parse(text) as unknown;
            this.#mode = Mode.KeyOrEnd;
          }
          pos = end;
          this.#start = pos;
          break;
        }
        case Mode.ArrayItemOrEnd:
          if (isSpace(c) || c === COMMA) {
            pos++;
            this.#start = pos;
          } else if (c === CLOSE_BRACKET) {
            this.#mode = Mode.KeyOrEnd;
            pos++;
            this.#start = pos;
          } else {
            this.#mode = Mode.Item;
            this.#start = pos;
            this.#nest = 0;
            this.#inString = false;
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

  /** Index of the closing quote of a string whose content starts at `from`, or -1. */
  #stringEnd(buf: Buffer, from: number): number {
    let q = buf.indexOf(QUOTE, from);
    while (q >= 0) {
      let slashes = 0;
      // Walk back over escapes; this may cross the previous chunk's edge, which is still held.
      for (let k = q - 1; k >= 0 && buf[k] === BACKSLASH; k--) slashes++;
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
