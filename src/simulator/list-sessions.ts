// ListSessionsV2 and GetSession: request validation, keyset paging over the generator and the
// page body, written straight into bytes (see bytes.ts).

import { ByteSink } from "./bytes.js";
import {
  parseRequestTimestamp,
  SimConnectError,
  truncateForMessage,
} from "./connect.js";
import { decodeCursor, encodeCursor, type CursorPosition } from "./cursor.js";
import {
  isBrokenRecordKind,
  type BrokenRecord,
  type FaultedRecord,
  type FaultInjector,
} from "./faults.js";
import type { SimSession } from "./model.js";
import { compileSessionQuery, type SessionPredicate } from "./query.js";
import { hash32 } from "./random.js";
import {
  hourOf,
  lowerBoundStart,
  upperBoundPosition,
  type SessionGenerator,
} from "./sessions.js";
import { HOUR_MS } from "./time.js";
import { faultedRecord } from "./wire-faults.js";
import type { WireEncoder } from "./wire.js";

export const LIST_SESSIONS_PATH = "/core.v1.SessionsService/ListSessionsV2";
export const GET_SESSION_PATH = "/core.v1.SessionsService/GetSession";
const MAX_SESSIONS_LIMIT = 100_000;

export interface ListSessionsRequest {
  limit: number;
  query: string;
  sortBy: string;
  /** Epoch ms; -Infinity when the field is empty. */
  startMs: number;
  /** Epoch ms; +Infinity when the field is empty. */
  endMs: number;
  cursor: string;
  /** Binds cursors to the filter values they were issued for. */
  filterKey: string;
  position: CursorPosition | undefined;
}

function optionalString(body: Record<string, unknown>, field: string): string {
  const v = body[field];
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") {
    throw new SimConnectError(
      "invalid_argument",
      `${field}: expected a string, got ${typeof v}`,
    );
  }
  return v;
}

/** proto3 JSON int32: a JSON number or a decimal string, integral, within range. */
function parseInt32Field(
  body: Record<string, unknown>,
  field: string,
): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  let n: number;
  if (typeof v === "number") n = v;
  else if (typeof v === "string" && /^-?\d+$/.test(v.trim()))
    n = Number(v.trim());
  else {
    const shown =
      typeof v === "string" ? `"${truncateForMessage(v)}"` : typeof v;
    throw new SimConnectError(
      "invalid_argument",
      `${field}: ${shown} is not an integer`,
    );
  }
  if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
    throw new SimConnectError(
      "invalid_argument",
      `${field}: ${String(v)} is not an int32`,
    );
  }
  return n;
}

export function parseListSessionsRequest(
  body: Record<string, unknown>,
  seed: number,
): ListSessionsRequest {
  const limit = parseInt32Field(body, "limit");
  if (limit === undefined || limit < 1 || limit > MAX_SESSIONS_LIMIT) {
    throw new SimConnectError(
      "invalid_argument",
      `limit: must be set, 0 < limit <= ${MAX_SESSIONS_LIMIT}${limit === undefined ? "" : `, got ${limit}`}`,
    );
  }
  const query = optionalString(body, "query");
  const sortBy = optionalString(body, "sortBy");
  const startText = optionalString(body, "startTimestamp");
  const endText = optionalString(body, "endTimestamp");
  const cursor = optionalString(body, "cursor");
  const startMs =
    startText === ""
      ? -Infinity
      : parseRequestTimestamp(startText, "startTimestamp");
  const endMs =
    endText === "" ? Infinity : parseRequestTimestamp(endText, "endTimestamp");
  const filterKey = hash32(
    "sessions",
    seed,
    String(startMs),
    String(endMs),
    query,
    sortBy,
  ).toString(36);
  const position = cursor === "" ? undefined : decodeCursor(cursor, filterKey);
  return { limit, query, sortBy, startMs, endMs, cursor, filterKey, position };
}

/** Sessions in [lowerMs, upperMs) after `after`, in order, at most `max`. */
function collectAfter(
  gen: SessionGenerator,
  lowerMs: number,
  upperMs: number,
  after: CursorPosition | undefined,
  max: number,
  match: SessionPredicate | undefined,
  nowMs: number,
): SimSession[] {
  const out: SimSession[] = [];
  const from = Math.max(
    lowerMs,
    after?.startMs ?? -Infinity,
    gen.historyStartMs,
  );
  if (!(upperMs > from) || max <= 0) return out;
  const lastHour = hourOf(upperMs - 1);
  for (let h = hourOf(from); h <= lastHour; h++) {
    const list = gen.sessionsInHour(h);
    if (list.length === 0) continue;
    let i =
      after && hourOf(after.startMs) === h
        ? upperBoundPosition(list, after.startMs, after.id)
        : lowerBoundStart(list, from);
    for (; i < list.length; i++) {
      const s = list[i] as SimSession;
      if (s.startMs >= upperMs) return out;
      if (s.startMs < lowerMs) continue;
      if (match && !match(s, nowMs)) continue;
      out.push(s);
      if (out.length >= max) return out;
    }
  }
  return out;
}

/** The last `max` sessions at or before `pos` (and ≥ lowerMs), in order. */
function collectUpTo(
  gen: SessionGenerator,
  lowerMs: number,
  pos: CursorPosition,
  max: number,
  match: SessionPredicate | undefined,
  nowMs: number,
): SimSession[] {
  const out: SimSession[] = [];
  const floor = Math.max(lowerMs, gen.historyStartMs);
  for (
    let h = hourOf(pos.startMs);
    h * HOUR_MS + HOUR_MS > floor && out.length < max;
    h--
  ) {
    const list = gen.sessionsInHour(h);
    for (
      let i = upperBoundPosition(list, pos.startMs, pos.id) - 1;
      i >= 0;
      i--
    ) {
      const s = list[i] as SimSession;
      if (s.startMs < floor) break;
      if (match && !match(s, nowMs)) continue;
      out.push(s);
      if (out.length >= max) break;
    }
  }
  return out.reverse();
}

/**
 * A session's start time as the service states it after a correction (see
 * Simulator.correctStartTime): `getSessionOnly` when ListSessionsV2 still answers the start it
 * was generated with. The session keeps its place in the list (its generated start).
 */
export interface StartCorrection {
  startMs: number;
  getSessionOnly: boolean;
}

/** The session as answered: its corrected start, if any, with the same duration. */
function asAnswered(
  s: SimSession,
  corrections: ReadonlyMap<string, StartCorrection> | undefined,
  by: "list" | "get",
): SimSession {
  const c = corrections?.get(s.id);
  if (c === undefined || (c.getSessionOnly && by === "list")) return s;
  return { ...s, startMs: c.startMs, startSubMsNanos: 0 };
}

export interface PageContext {
  generator: SessionGenerator;
  encoder: WireEncoder;
  faults: FaultInjector;
  nowMs: number;
  /** Start times corrected since the sessions were generated, by session id. */
  corrections?: ReadonlyMap<string, StartCorrection>;
  /** Called for each classic broken record served (badRecord). */
  onBroken: (record: BrokenRecord) => void;
  /** Called for each record broken on purpose that is served, whatever its fault. */
  onFaulted: (record: FaultedRecord) => void;
  /** Called each time a late session is left out of a page. */
  onLate: () => void;
  /** What `listMetadata.count` holds: the sessions of the page (default), or of the listing. */
  countMeans?: CountMeans | undefined;
}

/** What a listing's `listMetadata.count` holds: the page's records, or the whole listing's. */
export type CountMeans = "page" | "total";

/** The request faults a page meets (see RequestFaults). */
export interface PageFaults {
  /** Sessions of the previous page to repeat at the start of this one. */
  duplicate?: number;
  /** A wrong shape: 0 = the sessions under another member, 1 = only a nextCursor. */
  wrongShape?: number;
  /** The nextCursor points this many pages back (0 = this page again). */
  cycleBack?: number;
}

export interface BuiltPage {
  body: Buffer;
  count: number;
  nextCursor: string | undefined;
}

/** The member the sessions go under in a wrong-shape page. */
export const WRONG_LIST_MEMBER = "items";

/** Builds one ListSessionsV2 page, with the request faults of `pf` if any. */
export function buildSessionsPage(
  req: ListSessionsRequest,
  ctx: PageContext,
  pf: PageFaults = {},
): BuiltPage {
  const { generator, nowMs, faults } = ctx;
  const lowerMs = Math.max(req.startMs, generator.historyStartMs);
  // Sessions that have not started yet do not exist.
  const upperMs = Math.min(req.endMs, nowMs + 1);
  const query =
    req.query === "" ? undefined : compileSessionQuery(req.query, generator);
  // A late session exists but is not listed yet.
  const match: SessionPredicate | undefined =
    faults.rate("lateSession") > 0
      ? (s, now) => {
          if (query && !query(s, now)) return false;
          if (faults.listed(s.id, s.startMs, now)) return true;
          ctx.onLate();
          return false;
        }
      : query;
  const duplicate = pf.duplicate ?? 0;
  const repeat = req.position ? Math.min(duplicate, req.limit - 1) : 0;
  const fresh = collectAfter(
    generator,
    lowerMs,
    upperMs,
    req.position,
    req.limit - repeat + 1,
    match,
    nowMs,
  );
  const more = fresh.length > req.limit - repeat;
  const page = fresh.slice(0, req.limit - repeat);
  const repeated =
    repeat > 0 && req.position
      ? collectUpTo(generator, lowerMs, req.position, repeat, match, nowMs)
      : [];
  const last = page[page.length - 1];
  let nextCursor =
    more && last
      ? encodeCursor({ startMs: last.startMs, id: last.id }, req.filterKey)
      : undefined;
  if (pf.cycleBack !== undefined)
    nextCursor = cycleCursor(req, ctx, lowerMs, match, pf.cycleBack);

  const all = repeated.length > 0 ? repeated.concat(page) : page;
  const shape =
    pf.wrongShape === undefined
      ? undefined
      : all.length === 0
        ? 1
        : pf.wrongShape;
  if (shape === 1) {
    // Neither sessions nor listMetadata: only a cursor (to the window start on a last page).
    const cursor = nextCursor ?? cycleCursor(req, ctx, lowerMs, match, 1);
    return {
      body: Buffer.from(JSON.stringify({ nextCursor: cursor }), "utf8"),
      count: 0,
      nextCursor: cursor,
    };
  }
  const sink = new ByteSink(64 + all.length * 760);
  if (all.length > 0) {
    sink.ascii(shape === 0 ? `{"${WRONG_LIST_MEMBER}":[` : '{"sessions":[');
    const perSession = faults.perSession;
    for (let i = 0; i < all.length; i++) {
      const s = asAnswered(all[i] as SimSession, ctx.corrections, "list");
      if (i > 0) sink.byte(44);
      const kind = perSession ? faults.recordFault(s.id) : undefined;
      if (kind === undefined) {
        ctx.encoder.write(sink, s, nowMs);
        continue;
      }
      const record = ctx.encoder.object(s, nowMs);
      const served = faultedRecord(record, kind, s.id, s.startMs, faults);
      sink.bytes(served.bytes);
      ctx.onFaulted(served);
      if (isBrokenRecordKind(kind)) {
        ctx.onBroken({
          sessionId: s.id,
          kind,
          record: record as unknown as Record<string, unknown>,
          raw: served.raw,
        });
      }
    }
    sink.ascii('],"listMetadata":{');
  } else {
    sink.ascii('{"listMetadata":{');
  }
  // proto3: count omitted when 0, nextCursor omitted when empty.
  if (nextCursor !== undefined)
    sink.ascii(`"nextCursor":"${nextCursor}"${all.length > 0 ? "," : ""}`);
  const count =
    ctx.countMeans === "total"
      ? collectAfter(
          generator,
          lowerMs,
          upperMs,
          undefined,
          Number.MAX_SAFE_INTEGER,
          match,
          nowMs,
        ).length
      : all.length;
  if (all.length > 0) sink.ascii(`"count":${count}`);
  sink.ascii("}}");
  return { body: sink.result(), count: all.length, nextCursor };
}

/**
 * A cursor to the page `back` pages before the one `req` asks for (0 = that page again), or to
 * the start of the window when there is no such page: following it loops.
 */
function cycleCursor(
  req: ListSessionsRequest,
  ctx: PageContext,
  lowerMs: number,
  match: SessionPredicate | undefined,
  back: number,
): string {
  const windowStart = encodeCursor(
    { startMs: Math.ceil(lowerMs) - 1, id: "0" },
    req.filterKey,
  );
  if (!req.position) return windowStart;
  if (back === 0) return req.cursor;
  // The previous page ends at the request's position and starts after the position before it.
  const before = collectUpTo(
    ctx.generator,
    lowerMs,
    req.position,
    req.limit + 1,
    match,
    ctx.nowMs,
  );
  const first = before[0];
  if (before.length < req.limit + 1 || first === undefined) return windowStart;
  return encodeCursor({ startMs: first.startMs, id: first.id }, req.filterKey);
}

/** GetSession body, or the Connect error to answer. */
export function buildGetSession(
  body: Record<string, unknown>,
  ctx: Pick<PageContext, "generator" | "encoder" | "nowMs" | "corrections">,
): Buffer {
  const id = optionalString(body, "sessionId");
  if (id === "")
    throw new SimConnectError(
      "invalid_argument",
      "sessionId: must be set (min length 1)",
    );
  const s = ctx.generator.getSession(id);
  if (!s || s.startMs > ctx.nowMs) {
    throw new SimConnectError(
      "not_found",
      `session "${truncateForMessage(id)}" not found`,
    );
  }
  const sink = new ByteSink(2048);
  sink.ascii('{"session":');
  ctx.encoder.write(sink, asAnswered(s, ctx.corrections, "get"), ctx.nowMs);
  sink.byte(125);
  return sink.result();
}
