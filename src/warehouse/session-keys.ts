// The keys a session is stored under, and the tombstones that retire the ones it no longer has
// (migrations/0023). `sessions` is ordered by (start_time, id): a session whose start time
// differs between two reads (a correction, the list answer and GetSession disagreeing) is stored
// under two keys, and FINAL would keep a row under each. The key whose latest row ranks highest
// (`version`: a completed read above an open one, then the later read) is the session; every
// other key of its id gets a tombstone, a copy of that key's latest row with is_deleted = 1 and
// a version one above, which FINAL drops with the key. A later read under a retired key ranks
// above its tombstone and brings the key back, and the rule is applied again.
//
// The keys are read from `session_keys` (one small row per key, ordered by id, fed by a view on
// `sessions`), never from `sessions`, and once per writer's drain, never per record. A key goes
// with its session: once the retention has deleted every row of it (see deleteKeysOfDeletedSessions).
import type { Warehouse } from "./client.js";
import { mutationTarget, SINGLE } from "./cluster.js";
import { chTime } from "./format.js";
import { literalBatches, qualified, quoteString, stringList } from "./sql.js";
import { selectRows } from "./select.js";
import { SESSION_INSERT_COLUMNS } from "./session-rows.js";
import { Tables } from "./tables.js";

/** A key of a session to retire: its id, the start time (epoch ms), the version it has now. */
interface SupersededKey {
  id: string;
  startMs: number;
  version: number;
}

/** A stored row of `session_keys`: a key's start (epoch ms), version and tombstone flag. */
type KeyRow = [
  startMs: number | string,
  version: number | string,
  deleted: number,
];

/**
 * The ids among the sessions read at or after `sinceMs` that are stored under two start times
 * or more. When every key was read since then (a first sync, most of a large backfill), the
 * rows read since are all there is to group; else every key of the ids read since is grouped.
 * Either way only the id and start time are read, and only the ids found are read again whole.
 */
async function candidateIds(w: Warehouse, sinceMs: number): Promise<string[]> {
  const keys = qualified(w, Tables.sessionKeys);
  const since = "fromUnixTimestamp64Milli({since:Int64}, 'UTC')";
  const older = await selectRows<{ one: number }>(
    w,
    `SELECT 1 AS one FROM ${keys} WHERE fetched_at < ${since} LIMIT 1`,
    { since: sinceMs },
  );
  if (older.length === 0 && (await eachIdOnce(w, sinceMs))) return [];
  const scope =
    older.length === 0
      ? `fetched_at >= ${since}`
      : `id IN (SELECT id FROM ${keys} WHERE fetched_at >= ${since})`;
  const rows = await selectRows<{ id: string }>(
    w,
    `SELECT id FROM ${keys} WHERE ${scope}
     GROUP BY id HAVING min(start_time) != max(start_time)
     SETTINGS optimize_aggregation_in_order = 1`,
    { since: sinceMs },
  );
  return rows.map((r) => r.id);
}

/**
 * Whether every row of `session_keys` read at or after `sinceMs` has an id no other of them has
 * (then no id among them is stored under two start times). Exact although it counts hashes:
 * ids that share a hash make the count of distinct hashes smaller, never equal to the rows'.
 * It reads the ids once into a hash set of numbers, a third of the CPU of grouping them as
 * strings in order (914,841 keys of a first sync), so a sync whose sessions each came under
 * one start time — a first sync, a backfill — skips the grouping.
 */
async function eachIdOnce(w: Warehouse, sinceMs: number): Promise<boolean> {
  const [row] = await selectRows<{ once: number }>(
    w,
    `SELECT count() = uniqExact(cityHash64(id)) AS once FROM ${qualified(w, Tables.sessionKeys)}
     WHERE fetched_at >= fromUnixTimestamp64Milli({since:Int64}, 'UTC')`,
    { since: sinceMs },
  );
  return Number(row?.once) === 1;
}

/**
 * The keys to retire among the sessions read at or after `sinceMs` (epoch ms; every session
 * when undefined): for each id with more than one live key, every live key but the one whose
 * latest row has the highest version (the later start time on a tie).
 */
async function supersededKeys(
  w: Warehouse,
  sinceMs?: number,
): Promise<SupersededKey[]> {
  if (sinceMs === undefined) return keysOf(w, "");
  const found: SupersededKey[] = [];
  for (const ids of literalBatches(await candidateIds(w, sinceMs), quoteString))
    found.push(...(await keysOf(w, `WHERE id IN (${stringList(ids)})`)));
  return found;
}

/** The keys to retire among the rows of `session_keys` that `where` selects. */
async function keysOf(w: Warehouse, where: string): Promise<SupersededKey[]> {
  // Grouped by id, the table's first sorting column: read in order, a row of ids at a time.
  const rows = await selectRows<{ id: string; keys: KeyRow[] }>(
    w,
    `SELECT id, groupArray((toUnixTimestamp64Milli(start_time), version, is_deleted)) AS keys
     FROM ${qualified(w, Tables.sessionKeys)}
     ${where}
     GROUP BY id
     HAVING uniqExact(start_time) > 1
     SETTINGS optimize_aggregation_in_order = 1`,
  );
  return rows.flatMap((r) => keysToRetire(r.id, r.keys));
}

/** The live keys of one id but the one that stays (see supersededKeys). */
function keysToRetire(id: string, rows: readonly KeyRow[]): SupersededKey[] {
  // The latest row of each key; a tombstone wins a tie, as it does under FINAL.
  const latest = new Map<number, { version: number; deleted: boolean }>();
  for (const [start, version, deleted] of rows) {
    const startMs = Number(start);
    const v = Number(version);
    const seen = latest.get(startMs);
    if (
      seen === undefined ||
      v > seen.version ||
      (v === seen.version && deleted === 1)
    )
      latest.set(startMs, { version: v, deleted: deleted === 1 });
  }
  const live = [...latest]
    .filter(([, k]) => !k.deleted)
    .map(([startMs, k]) => ({ id, startMs, version: k.version }));
  if (live.length < 2) return [];
  const stays = live.reduce((a, b) =>
    b.version > a.version || (b.version === a.version && b.startMs > a.startMs)
      ? b
      : a,
  );
  return live.filter((k) => k !== stays);
}

/**
 * Writes a tombstone for every key of `keys` whose latest row in `sessions` still has the
 * version it was found with (a read that arrived since is judged again next time). Returns the
 * tombstones written. Its fetch time is now: the day it retires changes, and the rollups of
 * that day are computed again.
 */
async function writeTombstones(
  w: Warehouse,
  keys: readonly SupersededKey[],
): Promise<number> {
  let written = 0;
  // A key's literals: its id and start in the bound on the sort key, and the key itself.
  const literals = (k: SupersededKey) =>
    `${quoteString(k.id)}, ${quoteString(chTime(k.startMs))}, ${keyLiteral(k)}`;
  for (const batch of literalBatches(keys, literals))
    written += await writeTombstoneBatch(w, batch);
  return written;
}

/** A key as it is matched: (id, start time in epoch ms, version). */
const keyLiteral = (k: SupersededKey) =>
  `(${quoteString(k.id)}, ${k.startMs}, ${k.version})`;

async function writeTombstoneBatch(
  w: Warehouse,
  keys: readonly SupersededKey[],
): Promise<number> {
  const sessions = qualified(w, Tables.sessions);
  const columns = [...SESSION_INSERT_COLUMNS, "is_deleted"];
  const values = columns.map((c) =>
    c === "version"
      ? "version + 1"
      : c === "fetched_at"
        ? "now64(3, 'UTC')"
        : c === "is_deleted"
          ? "1"
          : c,
  );
  // The latest row of each key, bounded on the sort key first; then those still at the version.
  const latest = `SELECT * FROM ${sessions} FINAL
       WHERE start_time IN (${stringList(keys.map((k) => chTime(k.startMs)))})
         AND id IN (${stringList(keys.map((k) => k.id))})`;
  const match = `(id, toUnixTimestamp64Milli(start_time), version) IN (${keys.map(keyLiteral).join(", ")})`;
  const [before] = await selectRows<{ n: string }>(
    w,
    `SELECT count() AS n FROM (${latest}) WHERE ${match}`,
  );
  await w.client.command({
    query: `INSERT INTO ${sessions} (${columns.join(", ")})
      SELECT ${values.join(", ")} FROM (${latest}) WHERE ${match}`,
  });
  return Number(before?.n ?? 0);
}

/**
 * Retires the keys sessions read at or after `sinceMs` (every session when undefined) no longer
 * have; returns the tombstones written.
 */
export async function retireSupersededKeys(
  w: Warehouse,
  sinceMs?: number,
): Promise<number> {
  return writeTombstones(w, await supersededKeys(w, sinceMs));
}

const DAY_MS = 86_400_000;
/** Keys deleted by one statement: bounds its parameters. */
const KEYS_PER_DELETE = 5000;

/**
 * Deletes the keys of the sessions the retention deleted: keys whose start is older than the
 * sessions' retention at `nowMs` (`retentionDays`; 0 keeps every session, and every key) that no
 * row of `sessions` holds any more. The keys of a held session, and of rows past the retention
 * that the TTL has not merged away yet, stay: a key goes when its session goes. Waits for the
 * deletion; returns the keys deleted.
 */
export async function deleteKeysOfDeletedSessions(
  w: Warehouse,
  retentionDays: number,
  nowMs: number,
): Promise<number> {
  if (retentionDays === 0) return 0;
  const keys = qualified(w, Tables.sessionKeys);
  const old = "start_time < fromUnixTimestamp64Milli({horizon:Int64}, 'UTC')";
  const gone = await selectRows<{ id: string; start: string }>(
    w,
    `SELECT DISTINCT id, toUnixTimestamp64Milli(start_time) AS start FROM ${keys}
     WHERE ${old} AND (id, start_time) NOT IN
       (SELECT id, start_time FROM ${qualified(w, Tables.sessions)} WHERE ${old})`,
    { horizon: nowMs - retentionDays * DAY_MS },
  );
  const target = mutationTarget(
    w.cluster ?? SINGLE,
    w.database,
    Tables.sessionKeys,
  );
  for (let i = 0; i < gone.length; i += KEYS_PER_DELETE) {
    const batch = gone.slice(i, i + KEYS_PER_DELETE);
    await w.client.command({
      query: `ALTER TABLE ${target} DELETE
        WHERE has(arrayZip({ids:Array(String)}, {starts:Array(Int64)}), (id, toUnixTimestamp64Milli(start_time)))`,
      query_params: {
        ids: batch.map((k) => k.id),
        starts: batch.map((k) => Number(k.start)),
      },
      clickhouse_settings: { mutations_sync: "2" },
    });
  }
  return gone.length;
}
