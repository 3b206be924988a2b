// Storing one complete read of an entity stream: the current table gets every object read
// (and a disappearance for each object the read no longer returned); the history gets a new
// version only when an object's content hash changed, the version before it closed
// (valid_to), and a disappearance row when it is gone or marked for deletion. Policy
// suspensions keep every version instead, and a removal while a complete read no longer
// returns one. What is gone is only what `provesGone` says the read proves gone.
import type { EntityRecord } from "../sources/directory.js";
import {
  chTime,
  ENTITY_TABLES,
  fromChTime,
  type HistoryRow,
  type HistoryStream,
  insertEntityRows,
  knownSuspensionVersions,
  openVersions,
  suspensionRemovals,
  Tables,
} from "../warehouse/index.js";
import type { JobContext } from "./context.js";

export interface HistoryResult {
  /** Objects read. */
  read: number;
  /** New history versions (first sightings and changes). */
  changed: number;
  /** Objects gone or marked for deletion in this read. */
  gone: number;
}

/**
 * Stores `records`, a read of a stream's objects: a stored object the read did not return is
 * gone when `provesGone` says so (its listing was read whole, every record of it was read, and
 * nothing unreadable in it could have been that object). Records hold each id once.
 */
export async function storeRead(
  ctx: JobContext,
  stream: HistoryStream,
  records: readonly EntityRecord[],
  provesGone: (row: HistoryRow) => boolean,
  observedMs: number,
): Promise<HistoryResult> {
  const byId = new Map<string, EntityRecord>();
  for (const r of records) byId.set(r.id, r);
  const open = await openVersions(ctx.warehouse, stream);
  const rows = new ReadRows(observedMs);
  const result: HistoryResult = { read: byId.size, changed: 0, gone: 0 };
  for (const r of byId.values()) {
    const what = rows.record(r, open.get(r.id));
    if (what !== undefined) result[what]++;
  }
  for (const prev of open.values()) {
    if (byId.has(prev.id) || Number(prev.is_deleted) !== 0 || !provesGone(prev))
      continue;
    rows.gone(prev);
    result.gone++;
  }
  const tables = ENTITY_TABLES[stream];
  // History first: a current row is never newer than the history that explains it.
  await insertEntityRows(
    ctx.warehouse,
    tables.history,
    rows.history,
    ctx.insert,
  );
  await insertEntityRows(
    ctx.warehouse,
    tables.current,
    rows.current,
    ctx.insert,
  );
  for (const [table, n] of [
    [tables.history, rows.history.length],
    [tables.current, rows.current.length],
  ] as const) {
    counted(ctx, table, n);
  }
  return result;
}

/** The current and history rows one read of a stream adds, observed at `observedMs`. */
class ReadRows {
  readonly current: object[] = [];
  readonly history: object[] = [];
  readonly #observedMs: number;
  readonly #observedAt: string;

  constructor(observedMs: number) {
    this.#observedMs = observedMs;
    this.#observedAt = chTime(observedMs);
  }

  /** The rows of one object read: "changed" (a new version), "gone" (marked for deletion), or nothing new. */
  record(
    r: EntityRecord,
    prev: HistoryRow | undefined,
  ): "changed" | "gone" | undefined {
    const observedMs = this.#observedMs;
    const row = {
      id: r.id,
      ...r.columns,
      content_hash: r.contentHash,
      raw: r.raw,
      observed_at: this.#observedAt,
    };
    this.current.push({
      ...row,
      is_deleted: r.deleted ? 1 : 0,
      version: observedMs,
    });
    const prevLive = prev !== undefined && Number(prev.is_deleted) === 0;
    if (r.deleted) {
      if (prev !== undefined && !prevLive) return undefined;
      this.#open(row, prev, this.#startOf(prev, observedMs), 1);
      return "gone";
    }
    if (prevLive && prev.content_hash === r.contentHash) return undefined;
    const at = this.#startOf(
      prev,
      prevLive || !prev ? r.changedAtMs : observedMs,
    );
    this.#open(row, prev, at, 0);
    return "changed";
  }

  /** A stored object the read proves gone: its version closed, a disappearance opened. */
  gone(prev: HistoryRow): void {
    const at = this.#startOf(prev, this.#observedMs);
    const { valid_from: _from, valid_to: _to, ...content } = prev;
    this.#open({ ...content, observed_at: this.#observedAt }, prev, at, 1);
    this.current.push({
      ...content,
      is_deleted: 1,
      observed_at: this.#observedAt,
      version: this.#observedMs,
    });
  }

  /** A new version from `atMs`, closing the one before it. */
  #open(
    row: object,
    prev: HistoryRow | undefined,
    atMs: number,
    isDeleted: 0 | 1,
  ): void {
    if (prev)
      this.history.push({
        ...prev,
        valid_to: chTime(atMs),
        version: Math.max(this.#observedMs, Number(prev.version) + 1),
      });
    this.history.push({
      ...row,
      valid_from: chTime(atMs),
      valid_to: null,
      is_deleted: isDeleted,
      version: this.#observedMs,
    });
  }

  /** The start of a new version: when the service says it changed, never in the future,
   *  always after the version it follows (valid_from orders an object's versions). */
  #startOf(prev: HistoryRow | undefined, changedAtMs?: number): number {
    const at = Math.min(changedAtMs ?? this.#observedMs, this.#observedMs);
    return prev ? Math.max(at, fromChTime(prev.valid_from) + 1) : at;
  }
}

function counted(ctx: JobContext, table: string, rows: number): void {
  ctx.counters.rowsInserted += rows;
  ctx.observer.onRows?.({ job: ctx.job, table, rows });
}

/**
 * Stores a read of policy suspensions: every version not stored yet (one row per id and
 * content hash, `observed_at` the first read of it); a stored suspension the read did not
 * return, and that `provesGone` says it proves gone, is removed from this read on
 * (policy_suspension_removals); a removed one listed again is back from this read on.
 */
export async function storeVersions(
  ctx: JobContext,
  records: readonly EntityRecord[],
  provesGone: (row: { id: string }) => boolean,
  observedMs: number,
): Promise<HistoryResult> {
  const known = await knownSuspensionVersions(ctx.warehouse);
  const removals = await suspensionRemovals(ctx.warehouse);
  const observedAt = chTime(observedMs);
  const result: HistoryResult = { read: 0, changed: 0, gone: 0 };
  const versions: object[] = [];
  const listed = new Set<string>();
  for (const r of records) {
    result.read++;
    listed.add(r.id);
    const key = `${r.id}|${r.contentHash}`;
    if (known.has(key)) continue;
    known.add(key);
    versions.push({
      id: r.id,
      ...r.columns,
      content_hash: r.contentHash,
      observed_at: observedAt,
      raw: r.raw,
    });
    result.changed++;
  }
  const changes: object[] = [];
  for (const [id, removedAt] of removals) {
    if (removedAt !== null && listed.has(id)) {
      changes.push({
        id,
        removed_at: removedAt,
        returned_at: observedAt,
        observed_at: observedAt,
      });
    } else if (removedAt === null && !listed.has(id) && provesGone({ id })) {
      changes.push({
        id,
        removed_at: observedAt,
        returned_at: null,
        observed_at: observedAt,
      });
      result.gone++;
    }
  }
  // Versions first: a removal never names a suspension that is not stored.
  await insertEntityRows(
    ctx.warehouse,
    Tables.policySuspensions,
    versions,
    ctx.insert,
  );
  await insertEntityRows(
    ctx.warehouse,
    Tables.policySuspensionRemovals,
    changes,
    ctx.insert,
  );
  counted(ctx, Tables.policySuspensions, versions.length);
  counted(ctx, Tables.policySuspensionRemovals, changes.length);
  return result;
}
