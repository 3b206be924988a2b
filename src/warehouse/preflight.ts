// What `sessionhouse doctor` asks ClickHouse, read-only: the server's version, the database,
// the grants, the insert settings, the cluster, macros and Keeper, storage policies and disks.
// A server is asked without naming the database (it may not exist yet: migrate creates it);
// the embedded engine is opened without creating its directory or changing its mode.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ClickHouseClient } from "@clickhouse/client";
import type { Config } from "../config/index.js";
import {
  checkPinnedSettings,
  checkReachable,
  openWarehouse,
  serverClient,
} from "./client.js";
import { quoteIdent } from "./sql.js";

/** A ClickHouse as doctor sees it; every method reads, none writes. */
export interface ClickHouseProbe {
  readonly kind: "embedded" | "server";
  /** A data directory or a server origin (no credentials). */
  readonly location: string;
  /** Set when the embedded directory is read through a running service's read access. */
  readonly service?: { readonly pid: number; readonly url: string };
  version(): Promise<string>;
  databaseExists(database: string): Promise<boolean>;
  /** SHOW GRANTS of the current user (with the grants of its roles), one statement a line. */
  grants(): Promise<string[]>;
  /** SHOW GRANTS FOR `user`. */
  grantsOf(user: string): Promise<string[]>;
  /** The `readonly` setting of the current user's profile (0: may write). */
  readonlyLevel(): Promise<number>;
  /** Fails (SETTINGS_NOT_PINNABLE) when a query cannot set the settings every insert sets. */
  pinInsertSettings(): Promise<void>;
  /** Hosts and shards of `cluster` in system.clusters. */
  cluster(name: string): Promise<{ hosts: number; shards: number }>;
  macros(): Promise<Record<string, string>>;
  /** Fails when Keeper does not answer a read of its root (system.zookeeper). */
  readKeeperRoot(): Promise<number>;
  storagePolicies(): Promise<StorageVolume[]>;
  disks(): Promise<DiskSpace[]>;
  close(): Promise<void>;
}

export interface StorageVolume {
  policy: string;
  volume: string;
  disks: string[];
}

export interface DiskSpace {
  name: string;
  path: string;
  freeBytes: number;
  totalBytes: number;
}

/**
 * Opens ClickHouse for doctor: the server at CLICKHOUSE_URL (checked to answer,
 * CLICKHOUSE_UNREACHABLE otherwise), or the embedded data directory, which must exist.
 */
export async function openProbe(config: Config): Promise<ClickHouseProbe> {
  const ch = config.clickhouse;
  if (ch.url) {
    const url = new URL(ch.url);
    const client = serverClient(ch, url, undefined, "none");
    try {
      await checkReachable(client, url.origin);
    } catch (err) {
      await client.close();
      throw err;
    }
    return probeOf(client, "server", url.origin, undefined);
  }
  const w = await openWarehouse(config, { access: "read", keepModes: true });
  return {
    ...probeOf(w.client, w.kind, w.location, w.service),
    close: () => w.close(),
  };
}

function probeOf(
  client: ClickHouseClient,
  kind: "embedded" | "server",
  location: string,
  service: ClickHouseProbe["service"],
): ClickHouseProbe {
  const rows = async <T>(
    query: string,
    params: Record<string, unknown> = {},
  ): Promise<T[]> => {
    const rs = await client.query({
      query,
      query_params: params,
      format: "JSONEachRow",
    });
    return rs.json<T>();
  };
  const lines = async (query: string): Promise<string[]> => {
    const rs = await client.query({ query, format: "TabSeparatedRaw" });
    return (await rs.text()).split("\n").filter((l) => l.trim() !== "");
  };
  return {
    kind,
    location,
    ...(service ? { service } : {}),
    version: async () =>
      (await rows<{ v: string }>("SELECT version() AS v"))[0]?.v ?? "",
    databaseExists: async (database) =>
      Number(
        (
          await rows<{ n: string | number }>(
            "SELECT count() AS n FROM system.databases WHERE name = {db:String}",
            { db: database },
          )
        )[0]?.n ?? 0,
      ) > 0,
    grants: () => lines("SHOW GRANTS FINAL"),
    grantsOf: (user) => lines(`SHOW GRANTS FOR ${quoteIdent(user)}`),
    readonlyLevel: async () =>
      Number(
        (await rows<{ v: string }>("SELECT getSetting('readonly') AS v"))[0]
          ?.v ?? 0,
      ),
    pinInsertSettings: () => checkPinnedSettings(client, location),
    cluster: async (name) => {
      const [r] = await rows<{ hosts: string; shards: string }>(
        "SELECT count() AS hosts, uniqExact(shard_num) AS shards FROM system.clusters WHERE cluster = {name:String}",
        { name },
      );
      return { hosts: Number(r?.hosts ?? 0), shards: Number(r?.shards ?? 0) };
    },
    macros: async () =>
      Object.fromEntries(
        (
          await rows<{ macro: string; substitution: string }>(
            "SELECT macro, substitution FROM system.macros",
          )
        ).map((r) => [r.macro, r.substitution]),
      ),
    readKeeperRoot: async () =>
      Number(
        (
          await rows<{ n: string }>(
            "SELECT count() AS n FROM system.zookeeper WHERE path = '/'",
          )
        )[0]?.n ?? 0,
      ),
    storagePolicies: async () =>
      (
        await rows<{ policy: string; volume: string; disks: string[] }>(
          "SELECT policy_name AS policy, volume_name AS volume, disks FROM system.storage_policies",
        )
      ).map((r) => ({ policy: r.policy, volume: r.volume, disks: r.disks })),
    disks: async () =>
      (
        await rows<{ name: string; path: string; free: string; total: string }>(
          "SELECT name, path, free_space AS free, total_space AS total FROM system.disks",
        )
      ).map((r) => ({
        name: r.name,
        path: r.path,
        freeBytes: Number(r.free),
        totalBytes: Number(r.total),
      })),
    close: () => client.close(),
  };
}

/**
 * The pid the embedded engine wrote to its lock file (`status` in the data directory, "PID: n")
 * when it opened the directory; the engine removes the file when it closes. Undefined without
 * one, or when it names no pid.
 */
export function engineLockPid(dataDir: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, ENGINE_LOCK_FILE), "utf8");
  } catch {
    return undefined;
  }
  const pid = Number(/^PID:\s*(\d+)/m.exec(text)?.[1]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The file the embedded engine holds while a process has the data directory open. */
const ENGINE_LOCK_FILE = "status";
