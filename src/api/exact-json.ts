// JSON.parse that keeps 64-bit integers exact: a literal longer than 15 digits is read as a
// string of its digits (the wire sends most 64-bit values as strings already; this covers the
// ones that arrive as numbers).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;

/** Integer literals with more digits than this may not survive a double. */
const SAFE_DIGITS = 15;
const LONG_DIGIT_RUN = /\d{16}/;

/**
 * JSON.parse, except that integer literals longer than 15 digits are read as strings, so that
 * 64-bit values (counts, ids) beyond 2^53 keep their exact digits. Only the structure outside
 * strings is touched; a body without a 16-digit run is parsed as it is.
 */
export function parseExactJson(text: string): unknown {
  return JSON.parse(
    LONG_DIGIT_RUN.test(text) ? quoteLongIntegers(text) : text,
  ) as unknown;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** The text with every integer literal of more than SAFE_DIGITS digits put in quotes. */
function quoteLongIntegers(text: string): string {
  const parts: string[] = [];
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = stringEndIn(text, i + 1) + 1;
      if (i === 0) break; // unterminated: JSON.parse reports it
      continue;
    }
    if (c !== MINUS && !isDigit(c)) {
      i++;
      continue;
    }
    let j = c === MINUS ? i + 1 : i;
    const digitsFrom = j;
    while (j < n && isDigit(text.charCodeAt(j))) j++;
    const next = j < n ? text.charCodeAt(j) : -1;
    if (next === DOT || next === LOWER_E || next === UPPER_E) {
      // A fraction or an exponent: not an integer, left to JSON.parse.
      while (j < n) {
        const d = text.charCodeAt(j);
        if (
          !isDigit(d) &&
          d !== DOT &&
          d !== LOWER_E &&
          d !== UPPER_E &&
          d !== PLUS &&
          d !== MINUS
        )
          break;
        j++;
      }
    } else if (j - digitsFrom > SAFE_DIGITS) {
      parts.push(text.slice(last, i), '"', text.slice(i, j), '"');
      last = j;
    }
    i = Math.max(j, i + 1);
  }
  if (last === 0) return text;
  parts.push(text.slice(last));
  return parts.join("");
}

/** Index of the closing quote of a string whose content starts at `from`, or -1. */
function stringEndIn(text: string, from: number): number {
  let q = text.indexOf('"', from);
  while (q >= 0) {
    let slashes = 0;
    for (let k = q - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--)
      slashes++;
    if (slashes % 2 === 0) return q;
    q = text.indexOf('"', q + 1);
  }
  return -1;
}
