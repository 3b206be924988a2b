// How the tables are laid out on the ClickHouse the exporter writes to, and the SQL that follows
// from it. Migrations are written for one server (MergeTree-family engines, `{{on_cluster}}`
// after every table name); the cluster modes are derived from that text when it is rendered,
// so a new migration needs nothing of its own:
//
// - single (one server, the embedded engine) and cloud (ClickHouse Cloud replicates by itself):
//   the text as written, `{{on_cluster}}` empty.
// - cluster: every DDL `ON CLUSTER <name>`, the same engines on every node.
// - replicated: MergeTree engines become Replicated* under `<keeperPath>/{shard}/<db>/<table>`
//   with the `{replica}` macro; the deduplication window carries over to the replicated one.
// - replicated + distributed: every sharded table is `<name>_local` on each shard plus a
//   Distributed table under its own name, sharded by a hash of the first sorting-key column
//   that is not a date or time (all rows FINAL collapses together land on one shard). The
//   bookkeeping and entity tables (UNSHARDED) are not distributed: one replica on every node
//   of the cluster, read locally wherever the exporter connects and joined locally by views.
import type { Config } from "../config/index.js";
import type { Warehouse } from "./client.js";
import { quoteIdent } from "./sql.js";
import { SinkError } from "./errors.js";
import { Tables } from "./tables.js";

export type ClusterMode =
  | { readonly kind: "single" }
  | { readonly kind: "cloud" }
  | {
      readonly kind: "cluster";
      readonly name: string;
      readonly replicated: boolean;
      readonly distributed: boolean;
      readonly keeperPath: string;
    };

export const SINGLE: ClusterMode = { kind: "single" };
export const CLOUD: ClusterMode = { kind: "cloud" };

/**
 * Tables kept whole on every node when the others are sharded:
 * - the exporter's bookkeeping, which it reads to decide what to do next (checkpoints, window
 *   states, job definitions, the migration ledger, runs, poll misses, rollup days, retention
 *   settings, legal holds and their events, the service lease, the jobs' schedules): small, and read right after it
 *   is written;
 * - the entity (dimension) tables, which views join to sessions: ClickHouse refuses a JOIN of
 *   two Distributed tables (distributed_product_mode = deny), and a full copy on every node lets
 *   each shard join locally. They hold one row per user, device, column… not per session.
 * A view that joins two tables missing here is refused when it is rendered (see viewOf).
 */
const UNSHARDED: ReadonlySet<string> = new Set([
  Tables.schemaMigrations,
  Tables.checkpoints,
  Tables.runs,
  Tables.streamWindows,
  Tables.aggJobs,
  Tables.sessionPolls,
  Tables.rollupDays,
  Tables.retentionSettings,
  Tables.legalHolds,
  Tables.legalHoldEvents,
  Tables.serviceLease,
  Tables.jobSchedules,
  Tables.policySuspensions,
  Tables.users,
  Tables.usersHistory,
  Tables.userDevices,
  Tables.userDevicesHistory,
  Tables.nativeUsers,
  Tables.nativeUsersHistory,
  Tables.identityLinks,
  Tables.identityLinksHistory,
  Tables.inventoryColumns,
  Tables.inventoryColumnsHistory,
  Tables.cloudIntegrations,
  Tables.cloudIntegrationsHistory,
  // The new `checkpoints` that migration 0034 builds and swaps in: whole, as the table it replaces.
  "checkpoints_by_position",
]);

/** Suffix of the per-shard table behind a Distributed one. */
const LOCAL_SUFFIX = "_local";

/** The mode the configuration asks for (cloud is detected on the server, see openWarehouse). */
export function configuredMode(ch: Config["clickhouse"]): ClusterMode {
  if (!ch.cluster) return SINGLE;
  return {
    kind: "cluster",
    name: ch.cluster,
    replicated: ch.replicated,
    distributed: ch.distributed,
    keeperPath: ch.keeperPath.replace(/\/+$/, ""),
  };
}

/** Whether `table` is split over the shards (a Distributed table over `<table>_local`). */
function isSharded(mode: ClusterMode, table: string): boolean {
  return mode.kind === "cluster" && mode.distributed && !UNSHARDED.has(table);
}

/** The table that holds `table`'s rows on a node: `<table>_local` when sharded. */
export function storageTable(mode: ClusterMode, table: string): string {
  return isSharded(mode, table) ? table + LOCAL_SUFFIX : table;
}

/** ` ON CLUSTER <name>` in cluster mode, else "". */
export function onCluster(mode: ClusterMode): string {
  return mode.kind === "cluster" ? ` ON CLUSTER ${quoteIdent(mode.name)}` : "";
}

/** Whether the tables are Replicated* (self-managed) or replicated by the service (Cloud). */
function isReplicated(mode: ClusterMode): boolean {
  return mode.kind === "cloud" || (mode.kind === "cluster" && mode.replicated);
}

/**
 * The target of a mutation (ALTER … DELETE) of `table`'s rows: the table holding them on every
 * node, on the whole cluster.
 */
export function mutationTarget(
  mode: ClusterMode,
  database: string,
  table: string,
): string {
  return `${quoteIdent(database)}.${quoteIdent(storageTable(mode, table))}${onCluster(mode)}`;
}

/**
 * Settings of an insert into `table` beyond the pinned ones and the client's (clientSettings):
 * into a self-managed replicated checkpoint or ledger table it waits for a majority of the
 * replicas (quorum), which is what lets a SELECT with select_sequential_consistency see it on
 * any replica.
 */
export function clusterInsertSettings(
  mode: ClusterMode,
  table: string,
): Record<string, string | number> {
  if (mode.kind !== "cluster") return {};
  if (mode.replicated && QUORUM_TABLES.has(table))
    return { insert_quorum: "auto", insert_quorum_parallel: 0 };
  return {};
}

/**
 * Bookkeeping whose reads must see the latest write: the checkpoints, the migration ledger and
 * the service lease.
 */
const QUORUM_TABLES: ReadonlySet<string> = new Set([
  Tables.checkpoints,
  Tables.schemaMigrations,
  Tables.serviceLease,
]);

/**
 * Settings of a read that must see the latest checkpoint: on a replicated table a replica that
 * misses a quorum write refuses the read instead of answering with older state; on Cloud the
 * replica fetches the latest metadata first. None for a read-only warehouse: a reader may change
 * no setting (readonly = 1), decides nothing from what it reads, and shows what the replica it
 * reaches holds.
 */
export function consistentReadSettings(
  w: Pick<Warehouse, "cluster" | "readOnly">,
): Record<string, number> {
  return !w.readOnly && isReplicated(w.cluster ?? SINGLE)
    ? { select_sequential_consistency: 1 }
    : {};
}

/**
 * Settings of every query of the exporter's client when the tables are distributed:
 * - an insert into a Distributed table (rows, or INSERT … SELECT) returns only when every shard
 *   stored its part, so a checkpoint written after it never runs ahead of the data;
 * - reads and writes go to the first healthy replica of each shard (the order of
 *   remote_servers), not to a random one, so that what the exporter reads back (a job's
 *   previous fetch, which a re-fetch supersedes) is what it wrote;
 * - an IN or JOIN subquery over a Distributed table inside a query over another one runs once
 *   and is sent to the shards (GLOBAL), instead of being refused.
 */
export function clientSettings(
  mode: ClusterMode,
): Record<string, string | number> {
  return mode.kind === "cluster" && mode.distributed
    ? {
        insert_distributed_sync: 1,
        load_balancing: "in_order",
        distributed_product_mode: "global",
      }
    : {};
}

// ---------------------------------------------------------------------------------------------
// Rendering a migration statement for a mode.

const ON_CLUSTER = "{{on_cluster}}";
const DB = "{{db}}";

interface Target {
  /** The statement's head up to the table name, e.g. `CREATE TABLE IF NOT EXISTS `. */
  head: string;
  table: string;
  /** The text after `{{on_cluster}}`. */
  rest: string;
}

const HEAD =
  /^((?:CREATE|ALTER|DROP|ATTACH|DETACH|RENAME|TRUNCATE|OPTIMIZE|EXCHANGE)\b[^]*?)\{\{db\}\}\.(\w+)\s*\{\{on_cluster\}\}([^]*)$/i;

function targetOf(stmt: string): Target | undefined {
  const m = HEAD.exec(stmt);
  if (!m) return undefined;
  return { head: m[1] ?? "", table: m[2] ?? "", rest: m[3] ?? "" };
}

/**
 * The statements one migration statement (placeholders `{{db}}` and `{{on_cluster}}` still in
 * it) becomes in `mode`; `{{db}}` stays for the caller to fill. `db` is the database's name,
 * used inside Keeper paths and Distributed arguments.
 */
export function renderForMode(
  stmt: string,
  mode: ClusterMode,
  db: string,
): string[] {
  if (mode.kind !== "cluster")
    return [stmt.replaceAll(` ${ON_CLUSTER}`, "").replaceAll(ON_CLUSTER, "")];
  const on = onCluster(mode).trimStart();
  const plain = (s: string) => s.replaceAll(ON_CLUSTER, on);
  if (/^CREATE\s+DATABASE\b/i.test(stmt)) return [plain(stmt)];
  const t = targetOf(stmt);
  if (!t) {
    if (/^(CREATE|ALTER|DROP|RENAME|TRUNCATE)\b/i.test(stmt))
      throw new SinkError(
        "MIGRATION_UNRENDERABLE",
        `a migration statement has no "{{db}}.<table> {{on_cluster}}" and cannot be run on a cluster: ${stmt.slice(0, 120)}`,
        {
          hint: "write every CREATE/ALTER/DROP as `… {{db}}.name {{on_cluster}} …`",
        },
      );
    return [plain(stmt)];
  }
  const verb = /^\s*(CREATE|ALTER|DROP)\s+(MATERIALIZED\s+VIEW|VIEW|TABLE)?/i
    .exec(t.head)
    ?.slice(1)
    .map((s) => (s ?? "").toUpperCase().replace(/\s+/g, " "));
  const [action, object] = verb ?? [];
  if (action === "CREATE" && object === "TABLE")
    return createTable(t, mode, db);
  if (action === "CREATE" && object === "MATERIALIZED VIEW")
    return [materializedView(t, mode)];
  if (action === "CREATE" && object === "VIEW") checkViewJoins(t, mode);
  if (action === "ALTER") return alterTable(t, mode);
  // Statements about stored parts go to the table that holds them.
  if (/^\s*EXCHANGE\b/i.test(t.head) && isSharded(mode, t.table))
    return [exchangeLocal(t, mode)];
  if (/^\s*(TRUNCATE|OPTIMIZE)\b/i.test(t.head) && isSharded(mode, t.table))
    return [`${t.head}${DB}.${t.table}${LOCAL_SUFFIX} ${on}${t.rest}`];
  if (action === "DROP" && object === "TABLE" && isSharded(mode, t.table))
    return [
      `${t.head}${DB}.${t.table}${LOCAL_SUFFIX} ${on}${t.rest}`,
      `${t.head}${DB}.${t.table} ${on}${t.rest}`,
    ];
  return [plain(stmt)];
}

const MERGE_TREE = /\bENGINE\s*=\s*(\w*MergeTree)\b(\s*\(([^()]*)\))?/i;

type Cluster = Extract<ClusterMode, { kind: "cluster" }>;

function createTable(t: Target, mode: Cluster, db: string): string[] {
  const on = onCluster(mode).trimStart();
  const engine = MERGE_TREE.exec(t.rest);
  const mergeTree =
    engine !== null && !/^Replicated/i.test(engine[1] ?? "")
      ? engine
      : undefined;
  const sharded = isSharded(mode, t.table) && mergeTree !== undefined;
  const local = sharded ? t.table + LOCAL_SUFFIX : t.table;
  let rest = t.rest;
  if (mode.replicated && mergeTree) {
    const everyNode = mode.distributed && !sharded;
    const path = `${mode.keeperPath}/${everyNode ? "all" : "{shard}"}/${db}/${local}`;
    const replica = everyNode ? "{shard}-{replica}" : "{replica}";
    const args = (mergeTree[3] ?? "").trim();
    rest = rest.replace(
      MERGE_TREE,
      `ENGINE = Replicated${mergeTree[1] ?? ""}('${path}', '${replica}'${args ? `, ${args}` : ""})`,
    );
    rest = rest.replace(
      /\bnon_replicated_deduplication_window\b/g,
      "replicated_deduplication_window",
    );
  }
  const create = `${t.head}${DB}.${local} ${on}${rest}`;
  if (!sharded) return [create];
  const key = shardingKey(t.rest);
  const distributed = `${t.head}${DB}.${t.table} ${on} AS ${DB}.${local} ENGINE = Distributed('${mode.name}', '${db}', '${local}', ${key})`;
  return [create, distributed];
}

/**
 * The sharding key of a table: a hash of the first sorting-key column that is not a date or a
 * time (`id` of sessions, `job` of the aggregation tables), so that every row FINAL collapses
 * together — same sorting key — is on one shard, and one insert of a job's window goes whole to
 * one shard. A sorting key of dates and times only is hashed whole.
 */
export function shardingKey(definition: string): string {
  const orderBy =
    /\bORDER\s+BY\s+(\([^]*?\)|[^\s;]+)\s*(?:$|;|\n|PRIMARY|SAMPLE|TTL|SETTINGS|PARTITION)/i.exec(
      definition,
    )?.[1];
  if (!orderBy)
    throw new SinkError(
      "MIGRATION_UNRENDERABLE",
      "a MergeTree table without ORDER BY cannot be sharded",
    );
  const inner = orderBy.startsWith("(") ? orderBy.slice(1, -1) : orderBy;
  const keys = splitTopLevel(inner).map((k) => k.trim());
  const types = columnTypes(definition);
  const first = keys.find((k) => {
    const type = types.get(k);
    return type !== undefined && !/^(Nullable\()?(Date|DateTime)/.test(type);
  });
  return `cityHash64(${first ?? keys.join(", ")})`;
}

/** Column name → type, from the column list of a CREATE TABLE. */
function columnTypes(definition: string): Map<string, string> {
  const types = new Map<string, string>();
  for (const line of definition.split("\n")) {
    const m = /^\s*\(?\s*(\w+)\s+([A-Z]\w*(?:\([^]*)?)/.exec(line);
    if (m && !/^(INDEX|PROJECTION|CONSTRAINT)$/i.test(m[1] ?? ""))
      types.set(m[1] ?? "", (m[2] ?? "").trim());
  }
  return types;
}

/** Splits on commas outside parentheses and quotes. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === "'" || c === "`" || c === '"') quote = c;
    else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "," && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

const COLUMN_DDL = /^\s*(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i;

/** `{{db}}.<name>` of a sharded table → `{{db}}.<name>_local`; other names as they are. */
function toStorage(text: string, mode: ClusterMode): string {
  return text.replace(/\{\{db\}\}\.(\w+)/g, (whole, name: string) =>
    isSharded(mode, name) ? `${DB}.${name}${LOCAL_SUFFIX}` : whole,
  );
}

/**
 * EXCHANGE TABLES of sharded tables swaps the tables that hold the rows (`<name>_local`): each
 * Distributed table names its local table, so after the swap it reads the other one's parts.
 * The Distributed tables must show the columns of their new local tables (an ALTER … ADD COLUMN
 * of the old one before the swap gives them to both).
 */
function exchangeLocal(t: Target, mode: Cluster): string {
  const on = onCluster(mode).trimStart();
  return `${toStorage(t.head, mode)}${DB}.${t.table}${LOCAL_SUFFIX} ${on}${t.rest}`;
}

const PARTITION_BETWEEN_TABLES =
  /^\s*(ATTACH|REPLACE|MOVE)\s+PARTITION\b[^]*\b(FROM|TO\s+TABLE)\s+\{\{db\}\}\./i;

/**
 * ALTERs of a sharded table: column changes go to both the local and the Distributed table
 * (which must show the same columns); everything else (mutations, TTL, indexes, settings)
 * concerns the stored parts and goes to the local table only.
 */
function alterTable(t: Target, mode: ClusterMode): string[] {
  const on = onCluster(mode).trimStart();
  // A partition moved or copied between tables (ATTACH PARTITION … FROM, MOVE PARTITION … TO
  // TABLE) moves parts, which the local tables hold.
  const rest = PARTITION_BETWEEN_TABLES.test(t.rest)
    ? toStorage(t.rest, mode)
    : t.rest;
  const local = `${t.head}${DB}.${storageTable(mode, t.table)} ${on}${rest}`;
  if (!isSharded(mode, t.table)) return [local];
  const actions = splitTopLevel(t.rest);
  const columnOps = actions.filter((a) => COLUMN_DDL.test(a)).length;
  if (columnOps === 0) return [local];
  if (columnOps < actions.length)
    throw new SinkError(
      "MIGRATION_UNRENDERABLE",
      `an ALTER of ${t.table} mixes column changes with other actions, which go to different tables when it is distributed`,
      {
        hint: "put the column changes and the other actions in separate ALTER statements",
      },
    );
  return [local, `${t.head}${DB}.${t.table} ${on}${t.rest}`];
}

/**
 * A materialized view fires on inserts into the table it reads, on the node that stores them:
 * when that table is sharded, it reads `<table>_local` on each shard and writes TO its target
 * (a Distributed table routes the rows to their shard). Without TO its inner table could not be
 * laid out like the others, so TO is required on a cluster.
 */
function materializedView(t: Target, mode: ClusterMode): string {
  const on = onCluster(mode).trimStart();
  if (!/^\s*TO\s/i.test(t.rest))
    throw new SinkError(
      "MIGRATION_UNRENDERABLE",
      `the materialized view ${t.table} has no TO table, which a cluster needs`,
      {
        hint: "create its target table and write `… {{on_cluster}} TO {{db}}.target AS SELECT …`",
      },
    );
  const asAt = t.rest.search(/\bAS\s+SELECT\b/i);
  const before = t.rest.slice(0, asAt);
  const select = toStorage(t.rest.slice(asAt), mode);
  return `${t.head}${DB}.${t.table} ${on}${before}${select}`;
}

/**
 * Refuses a view that joins two tables that are both sharded: ClickHouse would refuse the JOIN
 * of two Distributed tables when the view is read. Names are the `{{db}}.<name>` it reads; one
 * that is a view, or a small table, belongs in UNSHARDED.
 */
function checkViewJoins(t: Target, mode: ClusterMode): void {
  if (!/\bJOIN\b/i.test(t.rest)) return;
  const sharded = [
    ...new Set(
      [...t.rest.matchAll(/\{\{db\}\}\.(\w+)/g)].map((m) => m[1] ?? ""),
    ),
  ].filter((name) => isSharded(mode, name));
  if (sharded.length > 1)
    throw new SinkError(
      "MIGRATION_UNRENDERABLE",
      `the view ${t.table} joins ${sharded.join(", ")}, which are all sharded when the tables are distributed; ClickHouse refuses a JOIN of two Distributed tables`,
      {
        hint: "add the small tables (or the views) it joins to UNSHARDED in src/warehouse/cluster.ts",
      },
    );
}
