// The TTL of every table the retention settings govern: rows older than `hotDays` move to the
// cold volume (when the table's storage policy has one), rows older than `retentionDays` are
// deleted, held sessions never, and, with an archive directory configured, only rows whose month
// `archive export` has archived (the `archived` flag, migrations/0039). The TTL a table was given is recorded in `retention_settings`
// and given again only when the settings change (`ALTER TABLE … MODIFY TTL`, or `REMOVE TTL`).
import type { Config } from "../config/index.js";
import type { Logger } from "../util/logger.js";
import type { Warehouse } from "./client.js";
import { qualified } from "./sql.js";
import {
  clusterInsertSettings,
  mutationTarget,
  SINGLE,
  storageTable,
} from "./cluster.js";
import { chTime } from "./format.js";
import { selectRows } from "./select.js";
import { Tables } from "./tables.js";

/** The retention of one table as configured. */
export interface TableRetention {
  table: string;
  /** The expression of the row's time the TTL counts from. */
  timeExpr: string;
  hotDays: number;
  retentionDays: number;
  /** Rows with the legal-hold flag are exempt from deletion. */
  holdExempt: boolean;
  /** Only rows with the archive flag are deleted (archiving configured, an archived table). */
  archivedOnly: boolean;
}

export interface RetentionSettings {
  coldVolume: string;
  tables: TableRetention[];
}

/** The settings of every governed table, from the configuration. */
export function retentionSettings(config: {
  clickhouse: Pick<Config["clickhouse"], "retentionDays">;
  retention: Config["retention"];
  archive?: Config["archive"] | undefined;
}): RetentionSettings {
  const r = config.retention;
  const archivedOnly = config.archive?.dir !== undefined;
  const rollup = (table: string): TableRetention => ({
    table,
    timeExpr: "day",
    hotDays: 0,
    retentionDays: r.rollupRetentionDays,
    holdExempt: false,
    archivedOnly: false,
  });
  // A month's row (its first day) goes with the last day it sums, not before that day's rows.
  const monthly = (table: string): TableRetention => ({
    ...rollup(table),
    timeExpr: "toLastDayOfMonth(day)",
  });
  return {
    coldVolume: r.coldVolume,
    tables: [
      {
        table: Tables.sessions,
        timeExpr: "toDateTime(start_time)",
        hotDays: r.tables.sessions.hotDays,
        retentionDays: config.clickhouse.retentionDays,
        holdExempt: true,
        archivedOnly,
      },
      {
        table: Tables.aggHistogram,
        timeExpr: "bucket_time",
        ...r.tables.agg_histogram,
        holdExempt: false,
        archivedOnly,
      },
      {
        table: Tables.aggTopValues,
        timeExpr: "window_start",
        ...r.tables.agg_top_values,
        holdExempt: false,
        archivedOnly,
      },
      rollup(Tables.sessionRollupsDaily),
      rollup(Tables.sessionTechnologyRollupsDaily),
      rollup(Tables.groupResourceRollupsDaily),
      rollup(Tables.clientIpRollupsDaily),
      rollup(Tables.machineAddressRollupsDaily),
      rollup(Tables.machineResourceRollupsDaily),
      rollup(Tables.userResourceRollupsDaily),
      rollup(Tables.resourcePeopleRollupsDaily),
      rollup(Tables.nativeUserRollupsDaily),
      rollup(Tables.technologyPairRollupsDaily),
      rollup(Tables.dataLabelRollupsDaily),
      rollup(Tables.resourceEnvironmentRollupsDaily),
      rollup(Tables.childSessionRollupsDaily),
      rollup(Tables.endUserRollupsDaily),
      rollup(Tables.userTypeRollupsHalfHourly),
      monthly(Tables.userRollupsMonthly),
      monthly(Tables.resourceRollupsMonthly),
      monthly(Tables.technologyRollupsMonthly),
      monthly(Tables.clientIpRollupsMonthly),
      monthly(Tables.groupResourceRollupsMonthly),
      monthly(Tables.userResourceRollupsMonthly),
    ],
  };
}

/**
 * The same settings deleting nothing: the cold tiers kept, every retention 0. `archive restore`
 * migrates its target with them, whatever the environment's retention: restored rows are
 * older than any retention, and would go at their next merge.
 */
export function keepingEverything(
  settings: RetentionSettings,
): RetentionSettings {
  return {
    ...settings,
    tables: settings.tables.map((t) => ({ ...t, retentionDays: 0 })),
  };
}

/** The TTL clause (after `MODIFY TTL`) for a table, or "" for none. */
function ttlClause(t: TableRetention, coldVolume: string | undefined): string {
  const parts: string[] = [];
  if (t.hotDays > 0 && coldVolume !== undefined)
    parts.push(
      `${t.timeExpr} + INTERVAL ${t.hotDays} DAY TO VOLUME '${coldVolume}'`,
    );
  const kept = [
    ...(t.holdExempt ? ["legal_hold = false"] : []),
    ...(t.archivedOnly ? ["archived = true"] : []),
  ];
  if (t.retentionDays > 0)
    parts.push(
      `${t.timeExpr} + INTERVAL ${t.retentionDays} DAY DELETE${kept.length > 0 ? ` WHERE ${kept.join(" AND ")}` : ""}`,
    );
  return parts.join(", ");
}

/** What a table was given, as `status` reports it. */
export interface AppliedRetention {
  table: string;
  ttl: string;
  hotDays: number;
  /** The cold volume rows move to; "" when the table's policy has none (hotDays not applied). */
  coldVolume: string;
  retentionDays: number;
  appliedAt: string;
}

interface SettingsRow {
  table_name: string;
  ttl: string;
  hot_days: number;
  cold_volume: string;
  retention_days: number;
  applied_at: string;
}

export async function appliedRetention(
  w: Warehouse,
): Promise<AppliedRetention[]> {
  const rows = await selectRows<SettingsRow>(
    w,
    `SELECT * FROM ${qualified(w, Tables.retentionSettings)} FINAL ORDER BY table_name`,
  );
  return rows.map((r) => ({
    table: r.table_name,
    ttl: r.ttl,
    hotDays: Number(r.hot_days),
    coldVolume: r.cold_volume,
    retentionDays: Number(r.retention_days),
    appliedAt: r.applied_at,
  }));
}

/** Tables of the database whose storage policy has a volume named `volume`. */
async function tablesWithVolume(
  w: Warehouse,
  volume: string,
): Promise<Set<string>> {
  const rows = await selectRows<{ name: string }>(
    w,
    `SELECT t.name AS name FROM system.tables AS t
     INNER JOIN system.storage_policies AS p ON p.policy_name = t.storage_policy
     WHERE t.database = {db:String} AND p.volume_name = {volume:String}`,
    { db: w.database, volume },
  );
  return new Set(rows.map((r) => r.name));
}

/** The tables of the database that have a TTL now (create_table_query names one). */
async function tablesWithTtl(w: Warehouse): Promise<Set<string>> {
  const rows = await selectRows<{ name: string; q: string }>(
    w,
    "SELECT name, create_table_query AS q FROM system.tables WHERE database = {db:String}",
    { db: w.database },
  );
  return new Set(rows.filter((r) => /\bTTL\b/.test(r.q)).map((r) => r.name));
}

/**
 * Gives every governed table the TTL its settings call for, when it differs from the one it was
 * last given (or, for a table never given one by these settings, from having a TTL at all).
 * Returns the tables changed.
 */
export async function applyRetention(
  w: Warehouse,
  settings: RetentionSettings,
  logger?: Logger,
): Promise<string[]> {
  const recorded = new Map(
    (await appliedRetention(w)).map((r) => [r.table, r]),
  );
  const mode = w.cluster ?? SINGLE;
  const cold = await tablesWithVolume(w, settings.coldVolume);
  const withTtl = await tablesWithTtl(w);
  const changed: string[] = [];
  for (const t of settings.tables) {
    // On a cluster the rows live in the table each node holds, and the change goes to every node.
    const stored = storageTable(mode, t.table);
    const volume = cold.has(stored) ? settings.coldVolume : undefined;
    const ttl = ttlClause(t, volume);
    const before = recorded.get(t.table);
    // A table rebuilt since (migrations/0023) has no TTL, whatever was recorded.
    const same = before
      ? before.ttl === ttl && (ttl === "" || withTtl.has(stored))
      : ttl === "" && !withTtl.has(stored);
    if (same && before) continue;
    // A table kept forever that never had a TTL is only recorded, so that every governed
    // table's settings are in retention_settings.
    if (!same) {
      const table = mutationTarget(mode, w.database, t.table);
      await w.client.command({
        query:
          ttl === ""
            ? `ALTER TABLE ${table} REMOVE TTL`
            : `ALTER TABLE ${table} MODIFY TTL ${ttl}`,
      });
    }
    await w.client.insert({
      table: qualified(w, Tables.retentionSettings),
      values: [
        {
          table_name: t.table,
          ttl,
          hot_days: t.hotDays,
          cold_volume: volume ?? "",
          retention_days: t.retentionDays,
          applied_at: chTime(Date.now()),
        },
      ],
      format: "JSONEachRow",
      clickhouse_settings: clusterInsertSettings(
        mode,
        Tables.retentionSettings,
      ),
    });
    if (same) continue;
    changed.push(t.table);
    logger?.info(
      {
        table: t.table,
        hotDays: t.hotDays,
        coldVolume: volume ?? null,
        retentionDays: t.retentionDays,
      },
      "retention applied",
    );
    if (t.hotDays > 0 && volume === undefined)
      logger?.warn(
        { table: t.table, volume: settings.coldVolume },
        "hotDays set, but the table's storage policy has no such volume: rows stay where they are",
      );
  }
  return changed;
}
