// The service lease (migrations/0029_service_lease.sql): which process runs the jobs against
// this database. ClickHouse has no compare-and-set, so a claim is an insert followed by a read:
// of every owner whose latest row is live (not released, not expired by the server's clock),
// the one whose tenure began first holds the lease, ties broken by owner id. Two processes that
// claim at the same moment both insert, both read back and agree on one holder; the loser
// withdraws. The window this leaves is in docs/scale-out.md ("Two processes on one database").
import type { Warehouse } from "./client.js";
import {
  consistentReadSettings,
  clusterInsertSettings,
  SINGLE,
} from "./cluster.js";
import { PINNED_INSERT_SETTINGS } from "./insert.js";
import { selectRows } from "./select.js";
import { qualified } from "./sql.js";
import { Tables } from "./tables.js";
import type { ProcessOwner } from "../util/process.js";

/** The one lease the exporter takes: the right to run the jobs and write their results. */
const SERVICE_LEASE = "service";

/** Rows older than this are not read: no claim lives that long (service.leaseTtlMs is capped). */
const LEASE_LOOKBACK_HOURS = 24;

/** One row of the lease: a claim, a renewal or a release, as the server timed it. */
export interface LeaseClaim {
  ownerId: string;
  owner: ProcessOwner;
  /** The command that claimed it (run, sync, demo). */
  command: string;
  /** When the owner's tenure began (epoch ms, server clock). */
  acquiredAtMs: number;
  renewedAtMs: number;
  expiresAtMs: number;
  released: boolean;
}

/** The lease as read: the server's clock, who holds it, and the latest row of every owner. */
export interface LeaseState {
  nowMs: number;
  /** The holder now; undefined when nobody holds it. */
  holder: LeaseClaim | undefined;
  /** The latest row of each owner seen in the last day, newest first. */
  owners: LeaseClaim[];
}

/**
 * The holder among the owners' latest rows at `nowMs`: of the live ones (not released,
 * expiring after `nowMs`), the first tenure, then the smallest owner id.
 */
function leaseHolder(
  latest: readonly LeaseClaim[],
  nowMs: number,
): LeaseClaim | undefined {
  let best: LeaseClaim | undefined;
  for (const c of latest) {
    if (c.released || c.expiresAtMs <= nowMs) continue;
    if (
      !best ||
      c.acquiredAtMs < best.acquiredAtMs ||
      (c.acquiredAtMs === best.acquiredAtMs && c.ownerId < best.ownerId)
    )
      best = c;
  }
  return best;
}

interface LeaseRow {
  owner_id: string;
  owner_host: string;
  owner_pid: number | string;
  owner_start: string;
  command: string;
  acquired: string | number;
  renewed: string | number;
  expires: string | number;
  released: number | string;
  now: string | number;
}

/** Reads the lease `name` (default the service lease) as the server sees it now. */
export async function readLease(
  w: Warehouse,
  name = SERVICE_LEASE,
): Promise<LeaseState> {
  // The latest row per owner; a release written in the same millisecond as a renewal wins.
  const rows = await selectRowsConsistent<LeaseRow>(
    w,
    `SELECT owner_id, owner_host, owner_pid, owner_start, command,
       toUnixTimestamp64Milli(acquired_at) AS acquired,
       toUnixTimestamp64Milli(renewed_at) AS renewed,
       toUnixTimestamp64Milli(expires_at) AS expires,
       released, toUnixTimestamp64Milli(now64(3)) AS now
     FROM ${qualified(w, Tables.serviceLease)}
     WHERE name = {name:String} AND renewed_at > now64(3) - INTERVAL ${LEASE_LOOKBACK_HOURS} HOUR
     ORDER BY owner_id, renewed_at DESC, released DESC
     LIMIT 1 BY owner_id`,
    { name },
  );
  const nowMs =
    rows[0] !== undefined ? Number(rows[0].now) : await serverNowMs(w);
  const owners = rows
    .map((r): LeaseClaim => ({
      ownerId: r.owner_id,
      owner: {
        host: r.owner_host,
        pid: Number(r.owner_pid),
        start: r.owner_start,
      },
      command: r.command,
      acquiredAtMs: Number(r.acquired),
      renewedAtMs: Number(r.renewed),
      expiresAtMs: Number(r.expires),
      released: Number(r.released) === 1,
    }))
    .sort((a, b) => b.renewedAtMs - a.renewedAtMs);
  return { nowMs, holder: leaseHolder(owners, nowMs), owners };
}

async function serverNowMs(w: Warehouse): Promise<number> {
  const [r] = await selectRows<{ now: string | number }>(
    w,
    "SELECT toUnixTimestamp64Milli(now64(3)) AS now",
  );
  return Number(r?.now);
}

async function selectRowsConsistent<T>(
  w: Warehouse,
  query: string,
  params: Record<string, unknown>,
): Promise<T[]> {
  const rs = await w.client.query({
    query,
    query_params: params,
    format: "JSONEachRow",
    clickhouse_settings: consistentReadSettings(w),
  });
  return rs.json<T>();
}

/** A row to write: a claim or renewal (`ttlMs` from now), or a release (`released`). */
export interface LeaseWrite {
  ownerId: string;
  owner: ProcessOwner;
  command: string;
  /** The tenure's start (epoch ms, server clock), or "now" for a new tenure. */
  acquiredAtMs: number | "now";
  ttlMs: number;
  released: boolean;
  /**
   * Written only if the owner's latest row is live (not released, not expired) by the server's
   * clock when the insert runs: a renewal that lands after its claim lapsed (its owner was
   * paused between reading the lease and writing) writes nothing, so it cannot bring back an
   * earlier tenure over the holder that took the lease meanwhile.
   */
  onlyWhileLive?: boolean;
}

/** Writes one row of the lease `name`, timed by the server's clock. */
export async function writeLease(
  w: Warehouse,
  row: LeaseWrite,
  name = SERVICE_LEASE,
): Promise<void> {
  await w.client.command({
    query: `INSERT INTO ${qualified(w, Tables.serviceLease)}
      (name, owner_id, owner_host, owner_pid, owner_start, command, acquired_at, renewed_at, expires_at, released)
      SELECT {name:String}, {ownerId:String}, {host:String}, {pid:UInt32}, {start:String}, {command:String},
        if({fresh:UInt8} = 1, now64(3), fromUnixTimestamp64Milli({acquired:Int64}, 'UTC')),
        now64(3), now64(3) + toIntervalMillisecond({ttl:UInt64}), {released:UInt8}
      WHERE {guard:UInt8} = 0 OR (
        SELECT count() FROM (
          SELECT released, expires_at FROM ${qualified(w, Tables.serviceLease)}
          WHERE name = {name:String} AND owner_id = {ownerId:String}
            AND renewed_at > now64(3) - INTERVAL ${LEASE_LOOKBACK_HOURS} HOUR
          ORDER BY renewed_at DESC, released DESC
          LIMIT 1
        ) WHERE released = 0 AND expires_at > now64(3)
      ) = 1`,
    query_params: {
      name,
      ownerId: row.ownerId,
      host: row.owner.host,
      pid: row.owner.pid,
      start: row.owner.start,
      command: row.command,
      fresh: row.acquiredAtMs === "now" ? 1 : 0,
      acquired: row.acquiredAtMs === "now" ? 0 : row.acquiredAtMs,
      ttl: row.released ? 0 : row.ttlMs,
      released: row.released ? 1 : 0,
      guard: row.onlyWhileLive === true ? 1 : 0,
    },
    clickhouse_settings: {
      ...PINNED_INSERT_SETTINGS,
      ...(row.onlyWhileLive === true ? consistentReadSettings(w) : {}),
      ...clusterInsertSettings(w.cluster ?? SINGLE, Tables.serviceLease),
    },
  });
}
