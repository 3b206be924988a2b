// The `id` member of a record that cannot be parsed (cut at the size limit, invalid UTF-8, not
// JSON), found by scanning its bytes, so that its dead letter still names the session.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** End (index of the closing quote) of the string whose opening quote is at `at`; -1 if cut. */
function stringEnd(bytes: Uint8Array, at: number): number {
  for (let i = at + 1; i < bytes.length; i++) {
    if (bytes[i] === BACKSLASH) i++;
    else if (bytes[i] === QUOTE) return i;
  }
  return -1;
}

function skipSpace(bytes: Uint8Array, at: number): number {
  let i = at;
  while (isSpace(bytes[i])) i++;
  return i;
}

/**
 * The string value of the outermost object's `id` member, or undefined when the bytes do not
 * start with an object that has one before they end or break. Nested `id` members (of the
 * sidecar, the user, …) are not taken for it.
 */
export function scanTopLevelId(bytes: Uint8Array): string | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== 0x7b) return undefined;
  let depth = 0;
  for (; i < bytes.length; i++) {
    const c = bytes[i];
    if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return undefined;
    } else if (c === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end < 0) return undefined;
      const isIdKey =
        depth === 1 &&
        end - i === 3 &&
        bytes[i + 1] === 0x69 &&
        bytes[i + 2] === 0x64;
      i = end;
      if (!isIdKey) continue;
      let j = skipSpace(bytes, i + 1);
      if (bytes[j] !== COLON) continue;
      j = skipSpace(bytes, j + 1);
      if (bytes[j] !== QUOTE) return undefined;
      const valueEnd = stringEnd(bytes, j);
      if (valueEnd < 0) return undefined;
      try {
        return JSON.parse(
          Buffer.from(bytes.subarray(j, valueEnd + 1)).toString("utf8"),
        ) as string;
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
