// Replay: the simulator serves given session records (one raw API record a line, JSON Lines)
// through ListSessionsV2 and GetSession instead of the sessions it generates, each record's
// bytes exactly as given. Paging, the time filter, the cursor and the `query` subset are those
// of the generated sessions (list-sessions.ts): start time in [startTimestamp, endTimestamp),
// capped at the clock's now, sorted by start time then id, keyset cursors bound to the filter.
// A record is served as recorded (its status is the one in the file, whatever the clock says).
import { readFileSync } from "node:fs";
import { ByteSink } from "./bytes.js";
import { SimConnectError, truncateForMessage } from "./connect.js";
import { encodeCursor } from "./cursor.js";
import type { ListSessionsRequest } from "./list-sessions.js";
import { queryTerms } from "./query.js";
import { parseRfc3339 } from "./time.js";

/** One replayed record: what the list filters on, and its bytes as given. */
interface ReplayedSession {
  id: string;
  startMs: number;
  /** Values of the `query` fields (see query.ts), "" when the record has none. */
  fields: Readonly<Record<string, string>>;
  bytes: Buffer;
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");
const member = (v: unknown, key: string): unknown =>
  typeof v === "object" && v !== null
    ? (v as Record<string, unknown>)[key]
    : undefined;

/** The values `query` terms compare, read from a record as the API sends it. */
function queryFields(
  r: Record<string, unknown>,
  brandMember: string,
): Record<string, string> {
  const user = member(r, "user");
  const brandUser = member(member(user, brandMember), "user");
  const resource = member(r, "resource");
  return {
    "user.email": text(member(brandUser, "email")),
    "user.username": text(member(user, "username")),
    "user.type": text(member(user, "type")),
    "user.id": text(member(brandUser, "id")),
    "resource.technology": text(member(resource, "technology")),
    "resource.name": text(member(resource, "name")),
    "resource.type": text(member(resource, "type")),
    "resource.id": text(member(resource, "id")),
    sessionStatus: text(r.sessionStatus),
    id: text(r.id),
    parentSessionId: text(r.parentSessionId),
  };
}

/** The sessions of a replay, in list order. */
export class ReplayedSessions {
  readonly #sorted: ReplayedSession[];
  readonly #byId = new Map<string, ReplayedSession>();

  private constructor(sorted: ReplayedSession[]) {
    this.#sorted = sorted;
    for (const s of sorted) this.#byId.set(s.id, s);
  }

  /**
   * The records of a JSON Lines file (blank lines skipped). A line that is not a JSON object
   * with an `id` and an RFC 3339 `startTime`, or an id given twice, is refused with its line
   * number: a replay serves exactly what it was given or nothing.
   */
  static fromFile(path: string, brandMember: string): ReplayedSessions {
    let lines: string[];
    try {
      lines = readFileSync(path, "utf8").split("\n");
    } catch (err) {
      throw new RangeError(
        `cannot read ${path}: ${(err as Error).message}; give a JSON Lines file of session records`,
        { cause: err },
      );
    }
    const out: ReplayedSession[] = [];
    const seen = new Set<string>();
    for (const [i, line] of lines.entries()) {
      if (line.trim() === "") continue;
      const where = `${path}:${i + 1}`;
      let r: unknown;
      try {
        r = JSON.parse(line);
      } catch {
        throw new RangeError(`${where}: not a JSON object`);
      }
      if (typeof r !== "object" || r === null || Array.isArray(r))
        throw new RangeError(`${where}: not a JSON object`);
      const record = r as Record<string, unknown>;
      const id = text(record.id);
      const startMs = parseRfc3339(text(record.startTime));
      if (id === "" || startMs === undefined)
        throw new RangeError(
          `${where}: a replayed session needs an "id" and an RFC 3339 "startTime"`,
        );
      if (seen.has(id))
        throw new RangeError(`${where}: session "${id}" is given twice`);
      seen.add(id);
      out.push({
        id,
        startMs,
        fields: queryFields(record, brandMember),
        bytes: Buffer.from(line.trim(), "utf8"),
      });
    }
    out.sort((a, b) =>
      a.startMs !== b.startMs
        ? a.startMs - b.startMs
        : a.id < b.id
          ? -1
          : a.id > b.id
            ? 1
            : 0,
    );
    return new ReplayedSessions(out);
  }

  get size(): number {
    return this.#sorted.length;
  }

  /** A ListSessionsV2 page, as list-sessions.ts builds one for generated sessions. */
  page(req: ListSessionsRequest, nowMs: number, countTotal: boolean): Buffer {
    const terms = req.query === "" ? undefined : queryTerms(req.query);
    const upperMs = Math.min(req.endMs, nowMs + 1);
    const after = req.position;
    const matches = (s: ReplayedSession): boolean =>
      s.startMs >= req.startMs &&
      s.startMs < upperMs &&
      (terms ?? []).every((t) => s.fields[t.field] === t.value);
    const listing = this.#sorted.filter(matches);
    const from =
      after === undefined
        ? 0
        : listing.findIndex(
            (s) =>
              s.startMs > after.startMs ||
              (s.startMs === after.startMs && s.id > after.id),
          );
    const rest = from < 0 ? [] : listing.slice(from);
    const page = rest.slice(0, req.limit);
    const last = page[page.length - 1];
    const sink = new ByteSink(
      64 + page.reduce((n, s) => n + s.bytes.length + 1, 0),
    );
    if (page.length > 0) {
      sink.ascii('{"sessions":[');
      for (const [i, s] of page.entries()) {
        if (i > 0) sink.byte(44);
        sink.bytes(s.bytes);
      }
      sink.ascii('],"listMetadata":{');
    } else sink.ascii('{"listMetadata":{');
    // proto3: nextCursor omitted on the last page, count omitted on an empty one.
    if (rest.length > page.length && last)
      sink.ascii(
        `"nextCursor":"${encodeCursor({ startMs: last.startMs, id: last.id }, req.filterKey)}",`,
      );
    if (page.length > 0)
      sink.ascii(`"count":${countTotal ? listing.length : page.length}`);
    sink.ascii("}}");
    return sink.result();
  }

  /** A GetSession answer: the record, once it has started; `not_found` otherwise. */
  get(body: Record<string, unknown>, nowMs: number): Buffer {
    const id = text(body.sessionId);
    if (id === "")
      throw new SimConnectError(
        "invalid_argument",
        "sessionId: must be set (min length 1)",
      );
    const s = this.#byId.get(id);
    if (s === undefined || s.startMs > nowMs)
      throw new SimConnectError(
        "not_found",
        `session "${truncateForMessage(id)}" not found`,
      );
    const sink = new ByteSink(s.bytes.length + 16);
    sink.ascii('{"session":');
    sink.bytes(s.bytes);
    sink.byte(125);
    return sink.result();
  }
}
