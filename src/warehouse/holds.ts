// Legal holds (migrations/0014): the holds themselves, their log, which sessions they name, and
// the hold flag of the stored session rows, which the retention's TTL respects. What a hold
// names is defined here twice, side by side, and nowhere else: as a predicate on a session
// record (for the writer, at insert) and as SQL (for the rows already stored).
import { randomUUID } from "node:crypto";
import type { Session } from "../api/schemas/session.js";
import type { Warehouse } from "./client.js";
import { MAX_QUERY_BYTES, qualified, stringList } from "./sql.js";
import { mutationTarget, SINGLE } from "./cluster.js";
import { chTime } from "./format.js";
import { selectCount, selectRows, storageTableDdl } from "./select.js";
import { sessionUserKey } from "./session-rows.js";
import { Tables } from "./tables.js";

/** What a hold names: a person (user_key), a resource (its name), or a session and its children. */
export type HoldScope = "user" | "resource" | "session";

export interface LegalHold {
  holdId: string;
  scope: HoldScope;
  value: string;
  reason: string;
  createdBy: string;
  createdAt: string;
  /** Null: until released. */
  until: string | null;
  releasedAt: string | null;
  releasedBy: string;
  releaseReason: string;
}

interface HoldRow {
  hold_id: string;
  scope: HoldScope;
  value: string;
  reason: string;
  created_by: string;
  created_at: string;
  until: string | null;
  released_at: string | null;
  released_by: string;
  release_reason: string;
  updated_at: string;
}

const toHold = (r: HoldRow): LegalHold => ({
  holdId: r.hold_id,
  scope: r.scope,
  value: r.value,
  reason: r.reason,
  createdBy: r.created_by,
  createdAt: r.created_at,
  until: r.until,
  releasedAt: r.released_at,
  releasedBy: r.released_by,
  releaseReason: r.release_reason,
});

const toRow = (h: LegalHold, updatedAtMs: number): HoldRow => ({
  hold_id: h.holdId,
  scope: h.scope,
  value: h.value,
  reason: h.reason,
  created_by: h.createdBy,
  created_at: h.createdAt,
  until: h.until,
  released_at: h.releasedAt,
  released_by: h.releasedBy,
  release_reason: h.releaseReason,
  updated_at: chTime(updatedAtMs),
});

/** Active: not released, and its `until` (if any) not passed at `nowMs`. */
export function isActive(h: LegalHold, nowMs: number): boolean {
  return (
    h.releasedAt === null &&
    (h.until === null || Date.parse(`${h.until.replace(" ", "T")}Z`) > nowMs)
  );
}

/** Every hold, latest state, oldest first. A database without the table has none. */
export async function listHolds(w: Warehouse): Promise<LegalHold[]> {
  const rows = await selectRows<HoldRow>(
    w,
    `SELECT * FROM ${qualified(w, Tables.legalHolds)} FINAL ORDER BY created_at, hold_id`,
  );
  return rows.map(toHold);
}

export async function activeHolds(
  w: Warehouse,
  nowMs: number,
): Promise<LegalHold[]> {
  return (await listHolds(w)).filter((h) => isActive(h, nowMs));
}

/** Records a new hold and its log entry; returns it. */
export async function addHold(
  w: Warehouse,
  hold: {
    scope: HoldScope;
    value: string;
    reason: string;
    createdBy: string;
    untilMs?: number | undefined;
  },
  nowMs: number,
): Promise<LegalHold> {
  const h: LegalHold = {
    holdId: `hold_${randomUUID().slice(0, 8)}`,
    scope: hold.scope,
    value: hold.value,
    reason: hold.reason,
    createdBy: hold.createdBy,
    createdAt: chTime(nowMs),
    until: hold.untilMs === undefined ? null : chTime(hold.untilMs),
    releasedAt: null,
    releasedBy: "",
    releaseReason: "",
  };
  await writeHold(w, h, nowMs);
  await logHoldEvent(w, {
    holdId: h.holdId,
    action: "added",
    actor: h.createdBy,
    reason: `${h.scope} ${h.value}: ${h.reason}`,
    rows: 0,
    atMs: nowMs,
  });
  return h;
}

/** Marks a hold released, with who and why, and logs it. */
export async function releaseHold(
  w: Warehouse,
  h: LegalHold,
  release: { by: string; reason: string },
  nowMs: number,
): Promise<LegalHold> {
  const released: LegalHold = {
    ...h,
    releasedAt: chTime(nowMs),
    releasedBy: release.by,
    releaseReason: release.reason,
  };
  await writeHold(w, released, nowMs);
  await logHoldEvent(w, {
    holdId: h.holdId,
    action: "released",
    actor: release.by,
    reason: release.reason,
    rows: 0,
    atMs: nowMs,
  });
  return released;
}

async function writeHold(
  w: Warehouse,
  h: LegalHold,
  nowMs: number,
): Promise<void> {
  await w.client.insert({
    table: qualified(w, Tables.legalHolds),
    values: [toRow(h, nowMs)],
    format: "JSONEachRow",
  });
}

interface HoldEvent {
  holdId: string;
  action: "added" | "released" | "applied";
  actor: string;
  reason: string;
  rows: number;
  atMs: number;
}

async function logHoldEvent(w: Warehouse, e: HoldEvent): Promise<void> {
  await w.client.insert({
    table: qualified(w, Tables.legalHoldEvents),
    values: [
      {
        at: chTime(e.atMs),
        hold_id: e.holdId,
        action: e.action,
        actor: e.actor,
        reason: e.reason,
        rows: e.rows,
      },
    ],
    format: "JSONEachRow",
  });
}

/** The values each scope of the given holds names. */
function named(holds: readonly LegalHold[]): Record<HoldScope, string[]> {
  const out: Record<HoldScope, string[]> = {
    user: [],
    resource: [],
    session: [],
  };
  for (const h of holds) out[h.scope].push(h.value);
  return out;
}

/**
 * Whether a session record is named by one of `holds`, for the writer; undefined when there is
 * no hold, so the common case costs nothing per row.
 */
export function holdMatcher(
  holds: readonly LegalHold[],
): ((s: Session) => boolean) | undefined {
  if (holds.length === 0) return undefined;
  const n = named(holds);
  const users = new Set(n.user);
  const resources = new Set(n.resource);
  const sessions = new Set(n.session);
  return (s) =>
    sessions.has(s.id) ||
    (s.parentSessionId !== "" && sessions.has(s.parentSessionId)) ||
    users.has(sessionUserKey(s)) ||
    resources.has(s.resource.name);
}

/**
 * The column of `sessions` a hold on a person or a resource compares its value with, as
 * holdMatcher compares sessionUserKey and the resource's name.
 */
const NAMED_BY = { user: "user_key", resource: "resource_name" } as const;

/**
 * The same as SQL on `sessions` columns. The holds' values are literals of the statement's text,
 * which travels in the request body: a query parameter travels in the URL, whose length a server
 * bounds (http_max_uri_size). A row's flag depends on every hold at once, so the statement is
 * not split: each value is in it once, and it raises the engine's max_query_size for itself
 * when it is longer (querySize).
 */
function heldSql(holds: readonly LegalHold[]): string {
  const n = named(holds);
  const list = (values: readonly string[]) =>
    `CAST([${stringList(values)}], 'Array(String)')`;
  return `(hasAny(${list(n.session)}, [id, parent_session_id]) OR has(${list(n.user)}, ${NAMED_BY.user}) OR has(${list(n.resource)}, ${NAMED_BY.resource}))`;
}

/** How many names a refusal of an unseen person or resource reads to offer the nearest. */
const SEEN_READ_LIMIT = 100_000;

/**
 * Whether a stored session names `value` as its person (`user`) or resource. When none does,
 * `others` holds the names stored sessions give instead (at most SEEN_READ_LIMIT of them), for
 * the nearest to be offered.
 */
export async function seenInSessions(
  w: Warehouse,
  scope: "user" | "resource",
  value: string,
): Promise<{ seen: boolean; others: string[] }> {
  const table = qualified(w, Tables.sessions);
  const column = NAMED_BY[scope];
  const found = await selectCount(
    w,
    `SELECT count() AS n FROM (SELECT 1 FROM ${table} WHERE ${column} = {value:String} LIMIT 1)`,
    { value },
  );
  if (found > 0) return { seen: true, others: [] };
  const rows = await selectRows<{ name: string }>(
    w,
    `SELECT DISTINCT ${column} AS name FROM ${table} WHERE ${column} != '' LIMIT ${SEEN_READ_LIMIT}`,
  );
  return { seen: false, others: rows.map((r) => r.name) };
}

/** The settings that let the engine parse `query`: none when it is within the default. */
function querySize(query: string): Record<string, string> {
  const bytes = Buffer.byteLength(query);
  return bytes < MAX_QUERY_BYTES
    ? {}
    : { max_query_size: String(bytes + MAX_QUERY_BYTES) };
}

/**
 * Makes the hold flag of every stored session row agree with `holds` (the active ones): rows
 * they name are flagged, rows no active hold names any more are unflagged. Waits for the
 * mutation; returns the rows it changed (0, and no mutation, when they already agree).
 */
export async function applyHolds(
  w: Warehouse,
  holds: readonly LegalHold[],
): Promise<number> {
  const held = heldSql(holds);
  const table = qualified(w, Tables.sessions);
  const differ = `legal_hold != ${held}`;
  const count = `SELECT count() AS n, countIf(legal_hold) AS released FROM ${table} WHERE ${differ}`;
  const [counts] = await selectRows<{ n: string; released: string }>(
    w,
    count,
    {},
    querySize(count),
  );
  const rows = Number(counts?.n ?? 0);
  if (rows === 0) return 0;
  const target = mutationTarget(
    w.cluster ?? SINGLE,
    w.database,
    Tables.sessions,
  );
  const update = `ALTER TABLE ${target} UPDATE legal_hold = NOT legal_hold WHERE ${differ}`;
  await w.client.command({
    query: update,
    clickhouse_settings: { mutations_sync: "2", ...querySize(update) },
  });
  // Rows no longer held that are already past the retention are deleted now: the flag's
  // mutation alone does not make the engine apply the TTL to them again (OPTIMIZE … FINAL
  // afterwards keeps them).
  if (Number(counts?.released ?? 0) > 0 && (await hasTtl(w)))
    await w.client.command({
      query: `ALTER TABLE ${target} MATERIALIZE TTL`,
      clickhouse_settings: { mutations_sync: "2" },
    });
  return rows;
}

async function hasTtl(w: Warehouse): Promise<boolean> {
  return /\bTTL\b/.test(await storageTableDdl(w, Tables.sessions));
}

/** Session ids whose stored rows carry the hold flag. */
export async function countHeldSessions(w: Warehouse): Promise<number> {
  return selectCount(
    w,
    `SELECT uniqExact(id) AS n FROM ${qualified(w, Tables.sessions)} WHERE legal_hold`,
  );
}

/**
 * The hold flags brought in line with the holds active at `nowMs` (a hold added or released, an
 * `until` passed, rows written by a run that read the holds before a change), logged when it
 * changed rows. Returns the rows changed.
 */
export async function applyActiveHolds(
  w: Warehouse,
  actor: string,
  nowMs: number,
): Promise<number> {
  const holds = await listHolds(w);
  if (holds.length === 0) return 0;
  const rows = await applyHolds(
    w,
    holds.filter((h) => isActive(h, nowMs)),
  );
  if (rows > 0)
    await logHoldEvent(w, {
      holdId: "",
      action: "applied",
      actor,
      reason:
        "hold flags of the stored sessions brought in line with the active holds",
      rows,
      atMs: nowMs,
    });
  return rows;
}
