// Storing one complete read of an entity stream: the current table gets every object read
// (and a disappearance for each object the read no longer returned); the history gets a new
// version only when an object's content hash changed, the version before it closed
// (valid_to), and a disappearance row when it is gone or marked for deletion.
import type { EntityRecord } from "../sources/directory.js";
import { chTime, fromChTime } from "../warehouse/format.js";
import {
  ENTITY_TABLES,
  insertEntityRows,
  openVersions,
  type HistoryRow,
  type HistoryStream,
} from "../warehouse/entities.js";
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
 * Stores `records`, a complete read of the objects that `covers` says it covers (all of them
 * for a full listing; a resource's native users; the users asked for). Records with one id
 * twice keep the last.
 */
export async function storeRead(
  ctx: JobContext,
  stream: HistoryStream,
  records: readonly EntityRecord[],
  covers: (row: HistoryRow) => boolean,
  observedMs: number,
): Promise<HistoryResult> {
  const byId = new Map<string, EntityRecord>();
  for (const r of records) byId.set(r.id, r);
  const open = await openVersions(ctx.warehouse, stream);
  const observedAt = chTime(observedMs);
  const current: object[] = [];
  const history: object[] = [];
  const result: HistoryResult = { read: byId.size, changed: 0, gone: 0 };

  const close = (prev: HistoryRow, atMs: number) => {
    history.push({
      ...prev,
      valid_to: chTime(atMs),
      version: Math.max(observedMs, Number(prev.version) + 1),
    });
  };
  /** The start of a new version: when the service says it changed, never in the future,
   *  always after the version it follows (valid_from orders an object's versions). */
  const startOf = (prev: HistoryRow | undefined, changedAtMs?: number) => {
    const at = Math.min(changedAtMs ?? observedMs, observedMs);
    return prev ? Math.max(at, fromChTime(prev.valid_from) + 1) : at;
  };

  for (const r of byId.values()) {
    const prev = open.get(r.id);
    const row = {
      id: r.id,
      ...r.columns,
      content_hash: r.contentHash,
      raw: r.raw,
      observed_at: observedAt,
    };
    current.push({
      ...row,
      is_deleted: r.deleted ? 1 : 0,
      version: observedMs,
    });
    const prevLive = prev !== undefined && Number(prev.is_deleted) === 0;
    if (r.deleted) {
      if (prev !== undefined && !prevLive) continue;
      const at = startOf(prev, observedMs);
      if (prev) close(prev, at);
      history.push({
        ...row,
        valid_from: chTime(at),
        valid_to: null,
        is_deleted: 1,
        version: observedMs,
      });
      result.gone++;
      continue;
    }
    if (prevLive && prev.content_hash === r.contentHash) continue;
    const at = startOf(prev, prevLive || !prev ? r.changedAtMs : observedMs);
    if (prev) close(prev, at);
    history.push({
      ...row,
      valid_from: chTime(at),
      valid_to: null,
      is_deleted: 0,
      version: observedMs,
    });
    result.changed++;
  }

  for (const prev of open.values()) {
    if (byId.has(prev.id) || Number(prev.is_deleted) !== 0 || !covers(prev))
      continue;
    const at = startOf(prev, observedMs);
    close(prev, at);
    const { valid_from: _from, valid_to: _to, ...content } = prev;
    history.push({
      ...content,
      valid_from: chTime(at),
      valid_to: null,
      is_deleted: 1,
      observed_at: observedAt,
      version: observedMs,
    });
    current.push({
      ...content,
      is_deleted: 1,
      observed_at: observedAt,
      version: observedMs,
    });
    result.gone++;
  }

  const tables = ENTITY_TABLES[stream];
  // History first: a current row is never newer than the history that explains it.
  await insertEntityRows(ctx.warehouse, tables.history, history, ctx.insert);
  await insertEntityRows(ctx.warehouse, tables.current, current, ctx.insert);
  for (const [table, rows] of [
    [tables.history, history.length],
    [tables.current, current.length],
  ] as const) {
    ctx.counters.rowsInserted += rows;
    ctx.observer.onRows?.({ job: ctx.job, table, rows });
  }
  return result;
}
