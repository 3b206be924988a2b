// Session-list cursors. A cursor is a keyset position (the last served (startMs, id)), not an
// offset: sessions that start while a client pages land after the position and show up on a
// later page, and nothing already behind it shifts. It is bound to the filter it was issued
// for, so that reusing it with other filter values fails loudly instead of skipping data.

import { SimConnectError } from "./connect.js";
import { hash32 } from "./random.js";

export interface CursorPosition {
  startMs: number;
  id: string;
}

const VERSION = "c1";

export function encodeCursor(pos: CursorPosition, filterKey: string): string {
  const body = `${VERSION}|${pos.startMs}|${pos.id}|${filterKey}`;
  const check = hash32(body).toString(36);
  return Buffer.from(`${body}|${check}`, "utf8").toString("base64url");
}

/** The position of `cursor`; `invalid_argument` if it is malformed or for another filter. */
export function decodeCursor(
  cursor: string,
  filterKey: string,
): CursorPosition {
  const invalid = (why: string): SimConnectError =>
    new SimConnectError("invalid_argument", `cursor: invalid cursor (${why})`);
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid("not base64url");
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const parts = text.split("|");
  if (parts.length !== 5 || parts[0] !== VERSION)
    throw invalid("unknown format");
  const [, startText, id, key, check] = parts as [
    string,
    string,
    string,
    string,
    string,
  ];
  if (hash32(parts.slice(0, 4).join("|")).toString(36) !== check)
    throw invalid("corrupted");
  if (key !== filterKey) {
    throw invalid(
      "it was issued for other filter values (query, sortBy or timestamps)",
    );
  }
  const startMs = Number(startText);
  if (!Number.isSafeInteger(startMs) || id === "")
    throw invalid("bad position");
  return { startMs, id };
}
