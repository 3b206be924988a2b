// ListSessionsV2 and GetSession: request validation, keyset paging over the generator and the
// page body, written straight into bytes (see bytes.ts).

import { ByteSink } from "./bytes.js";
import {
  parseRequestTimestamp,
  SimConnectError,
  truncateForMessage,
} from "./connect.js";
import { decodeCursor, encodeCursor, type CursorPosition } from "./cursor.js";
import { FaultInjector, type BrokenRecord } from "./faults.js";
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
import type { WireEncoder } from "./wire.js";

export const MAX_SESSIONS_LIMIT = 100_000;

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
export function parseInt32Field(
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

export interface PageContext {
  generator: SessionGenerator;
  encoder: WireEncoder;
  faults: FaultInjector;
  nowMs: number;
  /** Called for each broken record served. */
  onBroken: (record: BrokenRecord) => void;
}

export interface BuiltPage {
  body: Buffer;
  count: number;
  nextCursor: string | undefined;
}

/** Builds one ListSessionsV2 page. `duplicate`: sessions of the previous page to repeat. */
export function buildSessionsPage(
  req: ListSessionsRequest,
  ctx: PageContext,
  duplicate = 0,
): BuiltPage {
  const { generator, nowMs } = ctx;
  const lowerMs = Math.max(req.startMs, generator.historyStartMs);
  // Sessions that have not started yet do not exist.
  const upperMs = Math.min(req.endMs, nowMs + 1);
  const match =
    req.query === "" ? undefined : compileSessionQuery(req.query, generator);
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
  const nextCursor =
    more && last
      ? encodeCursor({ startMs: last.startMs, id: last.id }, req.filterKey)
      : undefined;

  const all = repeated.length > 0 ? repeated.concat(page) : page;
  const sink = new ByteSink(64 + all.length * 760);
  if (all.length > 0) {
    sink.ascii('{"sessions":[');
    for (let i = 0; i < all.length; i++) {
      const s = all[i] as SimSession;
      if (i > 0) sink.byte(44);
      const broken = ctx.faults.brokenKind(s.id);
      if (broken === undefined) {
        ctx.encoder.write(sink, s, nowMs);
      } else {
        const record = FaultInjector.corrupt(
          ctx.encoder.object(s, nowMs),
          broken,
          s.startMs,
        );
        const raw = JSON.stringify(record);
        sink.utf8(raw);
        ctx.onBroken({ sessionId: s.id, kind: broken, record, raw });
      }
    }
    sink.ascii('],"listMetadata":{');
  } else {
    sink.ascii('{"listMetadata":{');
  }
  // proto3: count omitted when 0, nextCursor omitted when empty.
  if (nextCursor !== undefined)
    sink.ascii(`"nextCursor":"${nextCursor}"${all.length > 0 ? "," : ""}`);
  if (all.length > 0) sink.ascii(`"count":${all.length}`);
  sink.ascii("}}");
  return { body: sink.result(), count: all.length, nextCursor };
}

/** GetSession body, or the Connect error to answer. */
export function buildGetSession(
  body: Record<string, unknown>,
  ctx: Omit<PageContext, "faults" | "onBroken">,
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
  ctx.encoder.write(sink, s, ctx.nowMs);
  sink.byte(125);
  return sink.result();
}
