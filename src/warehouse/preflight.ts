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
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import { quoteIdent } from "./sql.js";

/** The answers of a server asked about a user or profile it does not have. */
const NOT_FOUND = new Set(
  [
    ClickHouseCode.THERE_IS_NO_PROFILE,
    ClickHouseCode.ACCESS_ENTITY_NOT_FOUND,
    ClickHouseCode.UNKNOWN_ROLE,
  ].map(String),
);

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
  /** SHOW GRANTS FOR `user`; undefined when there is no such user. */
  grantsOf(user: string): Promise<string[] | undefined>;
  /**
   * SHOW CREATE SETTINGS PROFILE `name`: its statement, "absent" when there is no such profile,
   * "denied" when this user may not look (it needs SHOW SETTINGS PROFILES).
   */
  settingsProfile(name: string): Promise<ProfileLookup>;
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

export type ProfileLookup =
  | { state: "found"; statement: string }
  | { state: "absent" }
  | { state: "denied" };

interface StorageVolume {
  policy: string;
  volume: string;
  disks: string[];
}

interface DiskSpace {
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
  const w = await openWarehouse(config, {
    access: "read",
    allowMissingDatabase: true,
  });
  return {
    ...probeOf(w.client, w.kind, w.location, w.service),
    close: () => w.close(),
  };
}

/** A SELECT's rows as objects, and a statement's answer as lines of text. */
interface Reader {
  rows<T>(query: string, params?: Record<string, unknown>): Promise<T[]>;
  lines(query: string): Promise<string[]>;
}

function readerOf(client: ClickHouseClient): Reader {
  return {
    rows: async <T>(query: string, params: Record<string, unknown> = {}) => {
      const rs = await client.query({
        query,
        query_params: params,
        format: "JSONEachRow",
      });
      return rs.json<T>();
    },
    lines: async (query) => {
      const rs = await client.query({ query, format: "TabSeparatedRaw" });
      return (await rs.text()).split("\n").filter((l) => l.trim() !== "");
    },
  };
}

/** The first row's `v` as a number; 0 without one. */
async function numberOf(r: Reader, query: string): Promise<number> {
  const [row] = await r.rows<{ v: string | number }>(query);
  return Number(row?.v ?? 0);
}

function probeOf(
  client: ClickHouseClient,
  kind: "embedded" | "server",
  location: string,
  service: ClickHouseProbe["service"],
): ClickHouseProbe {
  const r = readerOf(client);
  return {
    kind,
    location,
    ...(service ? { service } : {}),
    version: async () =>
      (await r.rows<{ v: string }>("SELECT version() AS v"))[0]?.v ?? "",
    databaseExists: async (database) =>
      (
        await r.rows<{ n: string | number }>(
          "SELECT count() AS n FROM system.databases WHERE name = {db:String}",
          { db: database },
        )
      ).some((row) => Number(row.n) > 0),
    grants: () => r.lines("SHOW GRANTS FINAL"),
    grantsOf: async (user) => {
      try {
        return await r.lines(`SHOW GRANTS FOR ${quoteIdent(user)}`);
      } catch (err) {
        if (NOT_FOUND.has(clickHouseCode(err) ?? "")) return undefined;
        throw err;
      }
    },
    settingsProfile: async (name) => {
      try {
        const text = await r.lines(
          `SHOW CREATE SETTINGS PROFILE ${quoteIdent(name)}`,
        );
        return { state: "found", statement: text.join("\n") };
      } catch (err) {
        const code = clickHouseCode(err) ?? "";
        if (NOT_FOUND.has(code)) return { state: "absent" };
        if (code === String(ClickHouseCode.ACCESS_DENIED))
          return { state: "denied" };
        throw err;
      }
    },
    readonlyLevel: () => numberOf(r, "SELECT getSetting('readonly') AS v"),
    pinInsertSettings: () => checkPinnedSettings(client, location),
    ...layoutQuestions(r),
    close: () => client.close(),
  };
}

/** The questions about how the server is laid out: cluster, macros, Keeper, storage, disks. */
function layoutQuestions(
  r: Reader,
): Pick<
  ClickHouseProbe,
  "cluster" | "macros" | "readKeeperRoot" | "storagePolicies" | "disks"
> {
  return {
    cluster: async (name) => {
      const [c] = await r.rows<{ hosts: string; shards: string }>(
        "SELECT count() AS hosts, uniqExact(shard_num) AS shards FROM system.clusters WHERE cluster = {name:String}",
        { name },
      );
      return { hosts: Number(c?.hosts ?? 0), shards: Number(c?.shards ?? 0) };
    },
    macros: async () =>
      Object.fromEntries(
        (
          await r.rows<{ macro: string; substitution: string }>(
            "SELECT macro, substitution FROM system.macros",
          )
        ).map((m) => [m.macro, m.substitution]),
      ),
    readKeeperRoot: () =>
      numberOf(r, "SELECT count() AS v FROM system.zookeeper WHERE path = '/'"),
    storagePolicies: async () =>
      (
        await r.rows<{ policy: string; volume: string; disks: string[] }>(
          "SELECT policy_name AS policy, volume_name AS volume, disks FROM system.storage_policies",
        )
      ).map((v) => ({ policy: v.policy, volume: v.volume, disks: v.disks })),
    disks: async () =>
      (
        await r.rows<{
          name: string;
          path: string;
          free: string;
          total: string;
        }>(
          "SELECT name, path, free_space AS free, total_space AS total FROM system.disks",
        )
      ).map((d) => ({
        name: d.name,
        path: d.path,
        freeBytes: Number(d.free),
        totalBytes: Number(d.total),
      })),
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
