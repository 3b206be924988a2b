// Reads and writes of the entity streams' tables (migrations/0009_entity_streams.sql): the open
// history versions a new listing is compared with, the ids the streams read (users and
// resources seen in sessions), and the inserts.
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import { insertRows, type InsertOptions } from "./insert.js";
import { selectCount, selectRows } from "./select.js";
import { Tables } from "./tables.js";

/** The current and history tables of each entity stream that keeps history. */
export const ENTITY_TABLES = {
  users: { current: Tables.users, history: Tables.usersHistory },
  user_devices: {
    current: Tables.userDevices,
    history: Tables.userDevicesHistory,
  },
  native_users: {
    current: Tables.nativeUsers,
    history: Tables.nativeUsersHistory,
  },
  identity_links: {
    current: Tables.identityLinks,
    history: Tables.identityLinksHistory,
  },
  inventory: {
    current: Tables.inventoryColumns,
    history: Tables.inventoryColumnsHistory,
  },
  clouds: {
    current: Tables.cloudIntegrations,
    history: Tables.cloudIntegrationsHistory,
  },
} as const;
export type HistoryStream = keyof typeof ENTITY_TABLES;

/**
 * How a directory stream keeps what it read, which names its tables (the history rules of
 * src/pipeline/stream-specs.ts): current rows and their history, or every version read and the
 * removals (policy suspensions).
 */
export type DirectoryHistory =
  { kind: "current"; tables: HistoryStream } | { kind: "versions" };

/** A history row as stored: content columns and bookkeeping. */
export type HistoryRow = Record<string, unknown> & {
  id: string;
  valid_from: string;
  valid_to: string | null;
  content_hash: string;
  is_deleted: number;
  version: string | number;
};

/** The open version (valid_to NULL) of every object of a stream's history, by id. */
export async function openVersions(
  w: Warehouse,
  stream: HistoryStream,
): Promise<Map<string, HistoryRow>> {
  const rows = await selectRows<HistoryRow>(
    w,
    `SELECT * FROM ${qualified(w, ENTITY_TABLES[stream].history)} FINAL WHERE valid_to IS NULL`,
  );
  const out = new Map<string, HistoryRow>();
  // Two open versions of one id cannot be written by this exporter; the later one wins.
  for (const r of rows) {
    const prev = out.get(r.id);
    if (!prev || String(prev.valid_from) < String(r.valid_from))
      out.set(r.id, r);
  }
  return out;
}

export async function insertEntityRows(
  w: Warehouse,
  table: string,
  rows: readonly object[],
  options: InsertOptions,
): Promise<void> {
  // Bounded blocks: an inventory can hold many thousand columns.
  for (let i = 0; i < rows.length; i += 10_000)
    await insertRows(w, table, rows.slice(i, i + 10_000), options);
}

/** Ids of the users sessions name (the brand member's user and end user), and of the users
 *  policy suspensions were granted to. */
export async function sessionUserIds(w: Warehouse): Promise<string[]> {
  const rows = await selectRows<{ uid: string }>(
    w,
    `SELECT DISTINCT uid FROM (
       SELECT arrayJoin([user_id, end_user_id]) AS uid FROM ${qualified(w, Tables.sessions)}
       UNION ALL
       SELECT identity_id AS uid FROM ${qualified(w, Tables.policySuspensions)} WHERE identity_type = 'user'
     ) WHERE uid != '' ORDER BY uid`,
  );
  return rows.map((r) => r.uid);
}

/** Ids of the resources sessions name. */
export async function sessionResourceIds(w: Warehouse): Promise<string[]> {
  const rows = await selectRows<{ id: string }>(
    w,
    `SELECT DISTINCT resource_id AS id FROM ${qualified(w, Tables.sessions)} WHERE resource_id != '' ORDER BY id`,
  );
  return rows.map((r) => r.id);
}

/** When each user was last read (epoch ms), found or not. */
export async function usersLastRead(
  w: Warehouse,
): Promise<Map<string, number>> {
  const rows = await selectRows<{ id: string; ms: string }>(
    w,
    `SELECT id, toUnixTimestamp64Milli(max(observed_at)) AS ms FROM ${qualified(w, Tables.users)} GROUP BY id`,
  );
  return new Map(rows.map((r) => [r.id, Number(r.ms)]));
}

/** Ids of the human users known now. */
export async function humanUserIds(w: Warehouse): Promise<string[]> {
  const rows = await selectRows<{ id: string }>(
    w,
    `SELECT id FROM ${qualified(w, Tables.users)} FINAL WHERE type = 'human' ORDER BY id`,
  );
  return rows.map((r) => r.id);
}

/** The "id|content_hash" of every stored suspension version. */
export async function knownSuspensionVersions(
  w: Warehouse,
): Promise<Set<string>> {
  const rows = await selectRows<{ k: string }>(
    w,
    `SELECT DISTINCT concat(id, '|', content_hash) AS k FROM ${qualified(w, Tables.policySuspensions)}`,
  );
  return new Set(rows.map((r) => r.k));
}

/**
 * Every stored suspension id with its open removal (a complete listing no longer held it and
 * none has held it since): the removal's start, or null when it is not removed.
 */
export async function suspensionRemovals(
  w: Warehouse,
): Promise<Map<string, string | null>> {
  const rows = await selectRows<{ id: string; removed_at: string | null }>(
    w,
    `SELECT s.id AS id, r.removed_at AS removed_at
     FROM (SELECT DISTINCT id FROM ${qualified(w, Tables.policySuspensions)}) AS s
     LEFT JOIN (
       SELECT id, toNullable(max(removed_at)) AS removed_at
       FROM ${qualified(w, Tables.policySuspensionRemovals)} FINAL
       WHERE returned_at IS NULL GROUP BY id
     ) AS r ON r.id = s.id`,
  );
  return new Map(rows.map((r) => [r.id, r.removed_at]));
}

/**
 * Rows stored by a directory stream that keeps `history`, by table: objects known now (current,
 * FINAL) and history versions; or the versions and removals. Tables not created yet are left
 * out.
 */
export async function entityRowCounts(
  w: Warehouse,
  history: DirectoryHistory,
  tables: ReadonlySet<string>,
): Promise<Record<string, number>> {
  const names: string[] =
    history.kind === "versions"
      ? [Tables.policySuspensions, Tables.policySuspensionRemovals]
      : Object.values(ENTITY_TABLES[history.tables]);
  const out: Record<string, number> = {};
  for (const name of names) {
    if (!tables.has(name)) continue;
    out[name] = await selectCount(
      w,
      `SELECT count() AS n FROM ${qualified(w, name)} FINAL`,
    );
  }
  return out;
}
