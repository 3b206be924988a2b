// One @clickhouse/client for everything. CLICKHOUSE_URL selects a server; without it the
// embedded engine (chdb) plugs into the same client through its Connection seam, under the
// data directory. Same SQL either way.
import {
  accessSync,
  constants,
  existsSync,
  readFileSync,
  statSync,
} from "node:fs";
import { resolve } from "node:path";
import {
  ClickHouseLogLevel,
  createClient,
  type ClickHouseClient,
} from "@clickhouse/client";
import type { Config } from "../config/index.js";
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import { isCloudHost } from "../config/cloud.js";
import {
  clientSettings,
  CLOUD,
  configuredMode,
  onCluster,
  type ClusterMode,
} from "./cluster.js";
import { SinkError } from "./errors.js";
import { READER_SETTINGS } from "./reader-settings.js";
import { RefusedError } from "../util/errors.js";
import { nearest } from "../util/nearest.js";
import { removeStaleInsertFiles } from "./block-files.js";
import type { Logger } from "../util/logger.js";
import { errorMessage } from "../util/errors.js";
import {
  closeToOthers,
  makePrivateDir,
  octal,
  type Sharing,
} from "../util/private-files.js";
import { PINNED_INSERT_SETTINGS } from "./insert.js";
import { quoteIdent } from "./sql.js";
import {
  findService,
  removeServiceFile,
  serviceClient,
  SERVICE_PROBE_TIMEOUT_MS,
  type ServiceRecord,
} from "./service-access.js";

export interface Warehouse {
  readonly client: ClickHouseClient;
  /**
   * A client whose every statement the engine runs under readonly = 1: no write, no DDL, no
   * change of a setting, whatever the SQL says. For SQL that exists only to read and whose text
   * comes from outside the code (a rule file, a report filter, a user's query): a statement that
   * would write is refused by the engine itself (READONLY), not by a check of its text.
   */
  readonly reader: ClickHouseClient;
  /**
   * Set when every client of this warehouse is its reader (openWarehouse with access "read",
   * readerView): the engine refuses any write, DDL or change of a setting, there are no insert
   * clients, and nothing of the exporter's reads asks for a setting a reader may not change.
   */
  readonly readOnly?: true;
  /** Database holding every table; validated as an identifier by the config schema. */
  readonly database: string;
  /** How the client talks: in process (embedded) or over HTTP (server, or the service's reads). */
  readonly kind: "embedded" | "server";
  /** Where the data lives, for messages: a data directory or a server origin (no credentials). */
  readonly location: string;
  /**
   * Set when the embedded data directory is read through the read access of the `sessionhouse
   * run` that holds it: its process and URL. Such a warehouse refuses writes.
   */
  readonly service?: { readonly pid: number; readonly url: string };
  /** How the tables are laid out (cluster.ts); absent means one server. */
  readonly cluster?: ClusterMode;
  /**
   * Clients for inserts, each taking one at a time (see insert.ts); absent: `client` takes them
   * all. An embedded connection runs one query at a time, so blocks stored side by side need a
   * connection each; a server's client sends them side by side itself.
   */
  readonly insertClients?: readonly ClickHouseClient[];
  /**
   * The embedded engine's answer to `query`, a block at a time as the engine produces it, in
   * `format` (the query's own FORMAT clause); absent for a server. The embedded `client`
   * answers a query in one piece, so a large result would be held whole.
   */
  readonly queryBlocks?: (
    query: string,
    format: string,
    signal: AbortSignal,
  ) => AsyncIterable<Uint8Array>;
  close(): Promise<void>;
}

/** What the embedded connection offers beyond the client's Connection contract. */
interface ChdbConnection {
  chdb: {
    queryStream(
      query: string,
      options: { format: string; signal: AbortSignal },
    ): AsyncIterable<{ raw(): Uint8Array }>;
    queryAsync(
      query: string,
      options: { format: string; signal: AbortSignal },
    ): Promise<{ bytes(): Uint8Array }>;
  };
}

/** Embedded connections for inserts: as many as blocks may be stored side by side. */
const EMBEDDED_INSERT_CLIENTS = 2;

type ClickHouseConfig = Config["clickhouse"];

export interface OpenOptions {
  /**
   * "write" (the default): a warehouse that writes. The embedded data directory is created when
   * missing, the server checked to let inserts pin their settings and its database created;
   * refused with DATA_DIR_IN_USE while a running service holds the embedded data directory.
   *
   * "read": a warehouse whose every client is its reader, which the engine holds to
   * readonly = 1 (`readOnly`), on the embedded engine and on a server alike: no insert client,
   * no setting pinned, nothing created, no mode changed. A data directory or database that does
   * not exist is refused (WAREHOUSE_NOT_CREATED, exit 2). While the running service holds the
   * embedded data directory, it is read through the service's read-only access.
   */
  access?: "read" | "write";
  /**
   * With access "write": while the running service holds the embedded data directory, read
   * through its read access instead of refusing (a command that writes only to migrate and to
   * have the engine write files, which the service has done or a server does not need).
   */
  readThroughService?: boolean;
  /**
   * With access "read": a database that does not exist yet is no refusal (`doctor` reports it
   * itself).
   */
  allowMissingDatabase?: boolean;
  /**
   * Where the notice goes that an embedded data directory open to other users was closed;
   * without a logger, a line on stderr.
   */
  logger?: Logger;
}

export async function openWarehouse(
  config: Config,
  options: OpenOptions = {},
): Promise<Warehouse> {
  const ch = config.clickhouse;
  if (ch.url)
    return options.access === "read"
      ? openServerReader(ch, new URL(ch.url), options)
      : openServer(ch, new URL(ch.url));
  return openDataDir(ch, config.files, options);
}

/**
 * The embedded data directory, or the service that holds it. The service file is looked at
 * first; a file whose process is gone is removed. When the engine cannot be opened, the file is
 * looked at again (the service may have started in between, or answered slowly the first time).
 */
async function openDataDir(
  ch: ClickHouseConfig,
  files: Sharing,
  options: OpenOptions,
): Promise<Warehouse> {
  const access =
    options.access === "read" || options.readThroughService ? "read" : "write";
  const dataDir = resolve(ch.dataDir);
  refuseUnusableDataDir(dataDir);
  const first = await findService(dataDir);
  if (first.state === "running")
    return throughService(ch, dataDir, first.record, access);
  let embedded: Warehouse;
  try {
    embedded =
      options.access === "read"
        ? await openEmbeddedReadOnly(ch, options)
        : await openEmbedded(ch, files, options);
  } catch (err) {
    if (!(err instanceof SinkError && err.code === "EMBEDDED_OPEN_FAILED"))
      throw err;
    const again = await findService(dataDir, 3 * SERVICE_PROBE_TIMEOUT_MS);
    if (again.state === "running")
      return throughService(ch, dataDir, again.record, access);
    if (again.state === "silent")
      throw new SinkError(
        "DATA_DIR_IN_USE",
        `the data directory ${dataDir} is held by sessionhouse run (pid ${again.record.pid}), and its read access at ${again.record.url} does not answer`,
        {
          cause: err,
          hint: "the service may be overloaded or stopping; try again, or stop it first (SIGTERM)",
        },
      );
    throw err;
  }
  // The engine's lock is ours now: no other process serves this directory, and a file that
  // says otherwise (its process alive but not answering: a reused pid) is stale.
  if (first.state === "silent") removeServiceFile(dataDir, first.record.pid);
  return embedded;
}

/** Why a file system error makes a data directory unusable, in words. */
const UNUSABLE_BECAUSE: Readonly<Record<string, string>> = {
  ENOTDIR: "a part of its path is a file, not a directory",
  EACCES: "permission denied to this user",
  EPERM: "the operation is not permitted to this user",
  ELOOP: "its path has a loop of symbolic links",
  ENAMETOOLONG: "its path is too long",
};

/**
 * Refuses (DATA_DIR_UNUSABLE) a data directory this process cannot read and write, before
 * anything looks into it: a path through a file, a directory of another user, a file. A missing
 * directory is fine: opening the engine creates it.
 */
function refuseUnusableDataDir(dataDir: string): void {
  const refuse = (why: string, cause?: unknown) =>
    new SinkError(
      "DATA_DIR_UNUSABLE",
      `the data directory ${dataDir} cannot be used: ${why}`,
      {
        cause,
        hint: "set SESSIONHOUSE_DATA_DIR (clickhouse.dataDir) to a directory this user can read and write, or give this user the directory (chown, chmod 700)",
      },
    );
  try {
    if (!statSync(dataDir).isDirectory())
      throw refuse("it is a file, not a directory");
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    if (err instanceof SinkError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? "";
    if (code === "ENOENT") return;
    throw refuse(UNUSABLE_BECAUSE[code] ?? errorMessage(err), err);
  }
}

/** The running service's read access for a command that reads; DATA_DIR_IN_USE for one that writes. */
function throughService(
  ch: ClickHouseConfig,
  dataDir: string,
  record: ServiceRecord,
  access: "read" | "write",
): Warehouse {
  if (access === "write")
    throw new SinkError(
      "DATA_DIR_IN_USE",
      `the data directory ${dataDir} is in use by the running service (sessionhouse run, pid ${record.pid}); the embedded engine allows one process per data directory, and this command writes`,
      {
        hint: "stop the service first (SIGTERM or Ctrl-C), or let it do the work on its schedule; status, query and windows list work while it runs (they read through it)",
      },
    );
  const client = serviceClient(record, ch.database, ch.requestTimeoutMs);
  return {
    client,
    // The service's read access runs every request under readonly = 1 (src/http-front/policy.ts).
    reader: client,
    readOnly: true,
    database: ch.database,
    kind: "server",
    location: dataDir,
    service: { pid: record.pid, url: record.url },
    close: () => client.close(),
  };
}

/**
 * The ClickHouse server at `url`, checked to answer and to accept the pinned settings, with the
 * configured database created when it does not exist yet: a server refuses every request that
 * names a missing database, the migration that would create it included.
 */
async function openServer(ch: ClickHouseConfig, url: URL): Promise<Warehouse> {
  const location = url.origin;
  const connect = (
    database: string | undefined,
    settings: Record<string, string | number> = {},
  ) => serverClient(ch, url, database, settings);
  const bootstrap = connect(undefined);
  let cluster: ClusterMode;
  try {
    await checkReachable(bootstrap, location);
    await checkPinnedSettings(bootstrap, location);
    cluster = await clusterMode(bootstrap, ch, url, location);
    await ensureDatabase(bootstrap, ch.database, location, cluster);
  } finally {
    await bootstrap.close();
  }
  const client = connect(ch.database, clientSettings(cluster));
  const reader = readOnlyServerClient(
    ch,
    url,
    ch.database,
    readerSettings(cluster),
  );
  return {
    client,
    reader,
    database: ch.database,
    kind: "server",
    location,
    cluster,
    close: async () => {
      await reader.close();
      await client.close();
    },
  };
}

/**
 * The server at `url` for a command that only reads: every query through a client that asks for
 * readonly = 1 and sets nothing a reader may not (readerSettings), so a user whose profile is
 * readonly = 1 (dashboards/provisioning/clickhouse/grafana-reader.sh) reads as a writer does.
 * Nothing is created: a database that does not exist is refused.
 */
async function openServerReader(
  ch: ClickHouseConfig,
  url: URL,
  options: OpenOptions,
): Promise<Warehouse> {
  const location = url.origin;
  const bootstrap = readOnlyServerClient(ch, url, undefined);
  let cluster: ClusterMode;
  try {
    await checkReachable(bootstrap, location);
    cluster = await clusterMode(bootstrap, ch, url, location);
    if (!options.allowMissingDatabase)
      await requireDatabase(bootstrap, ch.database, location);
  } finally {
    await bootstrap.close();
  }
  const reader = readOnlyServerClient(
    ch,
    url,
    ch.database,
    readerSettings(cluster),
  );
  return {
    client: reader,
    reader,
    readOnly: true,
    database: ch.database,
    kind: "server",
    location,
    cluster,
    close: () => reader.close(),
  };
}

/**
 * The settings a reader sends beyond readonly = 1, each one of READER_SETTINGS (which a reader's
 * profile marks CHANGEABLE_IN_READONLY): when the tables are distributed, an IN or JOIN
 * subquery over a Distributed table inside a query over another runs once and is sent to the
 * shards (global), as on the exporter's own client, instead of being refused.
 */
function readerSettings(mode: ClusterMode): Record<string, string> {
  const settings: Record<string, string> =
    mode.kind === "cluster" && mode.distributed
      ? { distributed_product_mode: "global" }
      : {};
  for (const name of Object.keys(settings))
    if (!READER_SETTINGS.has(name))
      throw new Error(`${name} is not in READER_SETTINGS`);
  return settings;
}

/**
 * Refuses, with exit status 2, a database that does not exist: a reader creates nothing. The
 * databases there are offered when one is near the name.
 */
async function requireDatabase(
  client: ClickHouseClient,
  database: string,
  location: string,
): Promise<void> {
  const names = (
    await selectWith<{ name: string }>(
      client,
      "SELECT name FROM system.databases",
    )
  ).map((r) => r.name);
  if (names.includes(database)) return;
  const near = nearest(
    database,
    names.filter((n) => !SYSTEM_DATABASES.has(n)),
  );
  throw new RefusedError(
    "WAREHOUSE_NOT_CREATED",
    `ClickHouse at ${location} has no database ${database}${near === undefined ? "" : ` (there is ${near})`}: nothing has been exported there yet, and this command only reads`,
    {
      hint: `sessionhouse migrate (or a sync, or run) creates it; or set CLICKHOUSE_DATABASE to the database the exporter writes${near === undefined ? "" : `, e.g. CLICKHOUSE_DATABASE=${near}`}`,
    },
  );
}

/** The databases of the engine itself, never the exporter's. */
const SYSTEM_DATABASES: ReadonlySet<string> = new Set([
  "system",
  "information_schema",
  "INFORMATION_SCHEMA",
  "default",
  "_temporary_and_external_tables",
]);

/**
 * A @clickhouse/client for the server at `url`, with the credentials of the URL or the settings,
 * in `database` when given (the database must exist then). `settings` go with every query:
 * the exporter's own (date_time_input_format) and `extra`; "none" sends none (and asks for no
 * compressed answer), so that a readonly user can still be asked what it may do.
 */
export function serverClient(
  ch: ClickHouseConfig,
  url: URL,
  database: string | undefined,
  extra: Record<string, string | number> | "none" = {},
): ClickHouseClient {
  const settings =
    extra === "none"
      ? {}
      : { date_time_input_format: "best_effort" as const, ...extra };
  return createClient({
    url: url.origin + url.pathname.replace(/\/+$/, ""),
    username: decodeURIComponent(url.username) || ch.user,
    password: decodeURIComponent(url.password) || ch.password,
    ...(database === undefined ? {} : { database }),
    request_timeout: ch.requestTimeoutMs,
    compression: {
      request: ch.compressRequests ?? isCloudHost(url.href),
      // A compressed answer sets enable_http_compression, which readonly = 1 refuses to change.
      response: extra !== "none",
    },
    clickhouse_settings: settings,
    ...(ch.caFile ? { tls: { ca_cert: readFileSync(ch.caFile) } } : {}),
    // Its own log lines bypass our secret scrubber; every failure reaches us as an error.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/**
 * A client for the server at `url` whose every query asks for readonly = 1 and sets nothing
 * else but `settings` (each one of READER_SETTINGS, see readerSettings): on a user that may
 * write, the engine then refuses writes; on a user that is readonly = 1 already (Grafana's
 * reader profile), asking for the level it has is no change, which the server allows. No response compression: it would set enable_http_compression, which readonly = 1
 * refuses to change.
 */
function readOnlyServerClient(
  ch: ClickHouseConfig,
  url: URL,
  database: string | undefined,
  settings: Record<string, string> = {},
): ClickHouseClient {
  return createClient({
    url: url.origin + url.pathname.replace(/\/+$/, ""),
    username: decodeURIComponent(url.username) || ch.user,
    password: decodeURIComponent(url.password) || ch.password,
    ...(database === undefined ? {} : { database }),
    request_timeout: ch.requestTimeoutMs,
    compression: { request: false, response: false },
    clickhouse_settings: { ...settings, readonly: "1" },
    ...(ch.caFile ? { tls: { ca_cert: readFileSync(ch.caFile) } } : {}),
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/**
 * The layout of the tables: ClickHouse Cloud (its host, or `cloud_mode` = 1) takes plain DDL;
 * a configured cluster must be known to the server, and replicated tables without Distributed
 * ones need a cluster of one shard (each shard would hold its own copy of the data otherwise).
 */
async function clusterMode(
  client: ClickHouseClient,
  ch: ClickHouseConfig,
  url: URL,
  location: string,
): Promise<ClusterMode> {
  const mode = configuredMode(ch);
  const [cloud] = await selectWith<{ value: string }>(
    client,
    "SELECT value FROM system.settings WHERE name = 'cloud_mode'",
  );
  if (isCloudHost(url.href) || cloud?.value === "1") {
    if (mode.kind === "cluster")
      throw new SinkError(
        "CLUSTER_MODE_INVALID",
        `ClickHouse at ${location} is ClickHouse Cloud, which replicates by itself; the cluster ${mode.name} is configured`,
        {
          hint: "leave CLICKHOUSE_CLUSTER, CLICKHOUSE_REPLICATED and CLICKHOUSE_DISTRIBUTED unset for ClickHouse Cloud",
        },
      );
    return CLOUD;
  }
  if (mode.kind !== "cluster") return mode;
  const [shape] = await selectWith<{ hosts: string; shards: string }>(
    client,
    "SELECT count() AS hosts, uniqExact(shard_num) AS shards FROM system.clusters WHERE cluster = {name:String}",
    { name: mode.name },
  );
  if (Number(shape?.hosts ?? 0) === 0)
    throw new SinkError(
      "CLUSTER_UNKNOWN",
      `ClickHouse at ${location} has no cluster ${mode.name} (system.clusters)`,
      {
        hint: "set CLICKHOUSE_CLUSTER to a cluster of the server's remote_servers configuration",
      },
    );
  if (mode.replicated && !mode.distributed && Number(shape?.shards) > 1)
    throw new SinkError(
      "CLUSTER_MODE_INVALID",
      `the cluster ${mode.name} has ${shape?.shards} shards, and replicated tables without Distributed ones would keep each shard's data apart (every write goes to the shard of the node the exporter reaches)`,
      {
        hint: "set CLICKHOUSE_DISTRIBUTED=true, or use a cluster of one shard",
      },
    );
  return mode;
}

async function selectWith<T>(
  client: ClickHouseClient,
  query: string,
  params: Record<string, unknown> = {},
): Promise<T[]> {
  const rs = await client.query({
    query,
    query_params: params,
    format: "JSONEachRow",
  });
  return rs.json<T>();
}

/** Fails before anything else with what is wrong, not with the first migration's socket error. */
export async function checkReachable(
  client: ClickHouseClient,
  location: string,
): Promise<void> {
  const ping = await client.ping();
  if (ping.success) return;
  throw new SinkError(
    "CLICKHOUSE_UNREACHABLE",
    `ClickHouse at ${location} cannot be reached: ${ping.error.message}`,
    {
      cause: ping.error,
      hint: "check CLICKHOUSE_URL and that the server is up (leave CLICKHOUSE_URL unset to use the embedded engine)",
    },
  );
}

async function ensureDatabase(
  client: ClickHouseClient,
  database: string,
  location: string,
  cluster: ClusterMode,
): Promise<void> {
  try {
    const rs = await client.query({
      query:
        "SELECT count() AS n FROM system.databases WHERE name = {db:String}",
      query_params: { db: database },
      format: "JSONEachRow",
    });
    const [row] = await rs.json<{ n: string | number }>();
    if (Number(row?.n ?? 0) > 0) return;
    await client.command({
      query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}${onCluster(cluster)}`,
    });
  } catch (err) {
    throw new SinkError(
      "DATABASE_UNAVAILABLE",
      `ClickHouse at ${location} has no database ${database} and cannot create it: ${(err as Error).message}`,
      {
        cause: err,
        hint: "create the database, or give the exporter's user the right to (CREATE DATABASE), or set CLICKHOUSE_DATABASE to one it can use",
      },
    );
  }
}

/**
 * The data directory made and closed to others as `files` says: created when missing, for its
 * owner only (and the group with files.groupReadable).
 */
function prepareDataDir(
  dataDir: string,
  files: Sharing,
  { logger }: OpenOptions,
): void {
  makePrivateDir(dataDir, files);
  const closed = closeToOthers(dataDir, files);
  if (!closed) return;
  const fields = {
    dir: dataDir,
    was: octal(closed.was),
    now: octal(closed.now),
  };
  if (logger)
    logger.warn(fields, "data directory was open to other users: closed");
  else
    process.stderr.write(
      `notice: the data directory ${dataDir} was open to other users (mode ${fields.was}): now ${fields.now}\n`,
    );
}

/**
 * The embedded engine under the data directory, which is created when missing, for its owner
 * only (files.groupReadable: and the group); one this user owns that is open wider (made by an
 * older version) is closed first.
 */
async function openEmbedded(
  ch: ClickHouseConfig,
  files: Sharing,
  options: OpenOptions,
): Promise<Warehouse> {
  const dataDir = resolve(ch.dataDir);
  prepareDataDir(dataDir, files, options);
  const createChdbConnection = await loadChdb();
  // chdb implements @clickhouse/client's Connection contract exactly; the type comes from a
  // separate copy of client-common, hence the cast. Connections on one directory share the
  // engine.
  const connect = () =>
    createChdbConnection({ path: dataDir }) as ChdbConnection;
  const open = (connection: ChdbConnection = connect()) =>
    createClient({
      connection: connection as never,
      // The embedded session keeps a setting a query set for the queries after it. An insert's
      // deduplication token would then also name the next inserts that set none, and on a table
      // with a deduplication window those would be dropped as repeats: every query resets it,
      // and an insert that wants one sets its own.
      clickhouse_settings: { insert_deduplication_token: "" },
    });
  let client: ClickHouseClient;
  let connection: ChdbConnection;
  try {
    connection = connect();
    client = open(connection);
  } catch (err) {
    throw embeddedOpenFailed(dataDir, err);
  }
  try {
    await checkPinnedSettings(client, dataDir);
  } catch (err) {
    await client.close();
    throw err;
  }
  await removeStaleInsertFiles();
  const insertClients: ClickHouseClient[] = [];
  const readers: ClickHouseClient[] = [];
  let readerConnection: ChdbConnection;
  try {
    for (let i = 0; i < EMBEDDED_INSERT_CLIENTS; i++)
      insertClients.push(open());
    readerConnection = connect();
    readers.push(await openEmbeddedReader(readerConnection));
  } catch (err) {
    await Promise.all(
      [client, ...insertClients, ...readers].map((c) => c.close()),
    );
    throw new SinkError(
      "EMBEDDED_OPEN_FAILED",
      `the embedded engine cannot open a connection for inserts on ${dataDir}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const w: Warehouse = {
    client,
    database: ch.database,
    kind: "embedded",
    location: dataDir,
    insertClients,
    reader: readers[0] as ClickHouseClient,
    queryBlocks: (query, format, signal) =>
      embeddedBlocks(connection, query, format, signal),
    close: async () => {
      for (const c of insertClients) await c.close();
      for (const c of readers) await c.close();
      await client.close();
    },
  };
  READER_VIEWS.set(w, embeddedReaderView(w, readerConnection));
  return w;
}

/** The reader view of an embedded warehouse: its blocks stream on the reader's connection. */
function embeddedReaderView(
  w: Warehouse,
  readerConnection: ChdbConnection,
): Warehouse {
  return {
    ...readOnlyOf(w),
    queryBlocks: (query, format, signal) =>
      embeddedBlocks(readerConnection, query, format, signal),
  };
}

/** The reader views of the embedded warehouses opened here, each streaming on its reader's connection. */
const READER_VIEWS = new WeakMap<Warehouse, Warehouse>();

/** `w` with its reader as every client, no insert client, no block stream, closed with `w`. */
function readOnlyOf(w: Warehouse): Warehouse {
  return {
    client: w.reader,
    reader: w.reader,
    readOnly: true,
    database: w.database,
    kind: w.kind,
    location: w.location,
    ...(w.service ? { service: w.service } : {}),
    ...(w.cluster ? { cluster: w.cluster } : {}),
    close: () => Promise.resolve(),
  };
}

/**
 * The open warehouse `w` as a read-only warehouse (`readOnly`): its reader is every client, so
 * the engine refuses any write, and nothing asks for a setting a reader may not change. For the
 * reads of a process that also writes (the reports `run` writes on a schedule). Closing the view
 * does nothing; closing `w` closes it.
 */
export function readerView(w: Warehouse): Warehouse {
  if (w.readOnly) return w;
  return READER_VIEWS.get(w) ?? readOnlyOf(w);
}

/**
 * The embedded data directory for a command that only reads: one connection, its session set to
 * readonly = 1 before anything runs on it (openEmbeddedReader), serving every query. Nothing is
 * created and no mode changed: a data directory or database that does not exist is refused.
 */
async function openEmbeddedReadOnly(
  ch: ClickHouseConfig,
  options: OpenOptions,
): Promise<Warehouse> {
  const dataDir = resolve(ch.dataDir);
  if (!existsSync(dataDir))
    throw new RefusedError(
      "WAREHOUSE_NOT_CREATED",
      `the embedded data directory ${dataDir} does not exist: nothing has been exported there yet, and this command only reads`,
      {
        hint: "sessionhouse migrate (or a sync, or run) creates it; or set SESSIONHOUSE_DATA_DIR to the directory the exporter writes",
      },
    );
  const createChdbConnection = await loadChdb();
  let connection: ChdbConnection;
  let reader: ClickHouseClient;
  try {
    connection = createChdbConnection({ path: dataDir }) as ChdbConnection;
    reader = await openEmbeddedReader(connection);
  } catch (err) {
    throw embeddedOpenFailed(dataDir, err);
  }
  try {
    if (!options.allowMissingDatabase)
      await requireDatabase(reader, ch.database, dataDir);
  } catch (err) {
    await reader.close();
    throw err;
  }
  return {
    client: reader,
    reader,
    readOnly: true,
    database: ch.database,
    kind: "embedded",
    location: dataDir,
    queryBlocks: (query, format, signal) =>
      embeddedBlocks(connection, query, format, signal),
    close: () => reader.close(),
  };
}

/**
 * What an aggregation or sort of an embedded read may hold in memory before the engine writes it
 * to disk and goes on from there: the engine runs in this process, so the bound is the
 * process's (a report's access review over a month of 8.5 million sessions peaked at 2.49 GB
 * without it, 1.24 GB with it, at about a quarter more CPU). Set on the embedded reader's
 * session before readonly = 1, which then refuses any change of a setting; a server keeps its
 * own (a reader may not change them).
 * A smaller bound for an aggregation is not less memory: merging what it wrote to disk holds a
 * part of every file it wrote. _Systems reached per person_ over the 100M organisation year
 * (two aggregations and a sort) peaked at 3,851 MiB with 200 MB, 2,107 MiB with 400 MB and
 * 1,679 MiB with 800 MB, at 213, 183 and 171 s of CPU; over the 10M year, 932 MiB with 400 MB
 * and 1,261 MiB with 800 MB.
 */
export const EMBEDDED_READ_SETTINGS: Readonly<Record<string, number>> = {
  max_bytes_before_external_group_by: 800_000_000,
  max_bytes_before_external_sort: 400_000_000,
  // The engine's ratio of the machine's free memory (0.5 by default) decides when a sort goes to
  // disk, and the byte bound above only adds that the sort be larger than it: on a machine of
  // 23 GiB a sort never spilled, so a report's sorted result of millions of rows was held whole
  // (policy-exceptions over a year of 10M sessions: 1.27 GB for its one query). At 0 the byte
  // bound alone decides. An aggregation spills at its byte bound whatever its own ratio.
  max_bytes_ratio_before_external_sort: 0,
};

/**
 * A client on its own embedded connection, whose session is set to readonly = 1 before anything
 * else runs on it (after EMBEDDED_READ_SETTINGS): the embedded session keeps a setting for every
 * later statement, and readonly = 1 cannot be undone from inside it. Every query also asks for
 * readonly = 1 again (no change, so allowed), which holds should the session ever be a fresh one.
 */
async function openEmbeddedReader(
  connection: ChdbConnection,
): Promise<ClickHouseClient> {
  // On the connection itself: the client would send readonly = 1 before the settings.
  const spill = Object.entries(EMBEDDED_READ_SETTINGS)
    .map(([k, v]) => `${k} = ${v}`)
    .join(", ");
  const signal = new AbortController().signal;
  for (const query of [`SET ${spill}`, "SET readonly = 1"])
    await connection.chdb.queryAsync(query, { format: "TabSeparated", signal });
  return createClient({
    connection: connection as never,
    clickhouse_settings: { readonly: "1" },
  });
}

/** The engine could not open the data directory: most often another process holds it. */
function embeddedOpenFailed(dataDir: string, err: unknown): SinkError {
  return new SinkError(
    "EMBEDDED_OPEN_FAILED",
    `the embedded engine cannot open ${dataDir}: ${(err as Error).message}`,
    {
      cause: err,
      hint: "another sessionhouse process may be using this data directory (a sync, a migrate, or a service started without read access); stop it or set SESSIONHOUSE_DATA_DIR",
    },
  );
}

/** A result of the embedded engine, block by block as it produces them. */
async function* embeddedBlocks(
  connection: ChdbConnection,
  query: string,
  format: string,
  signal: AbortSignal,
): AsyncIterable<Uint8Array> {
  let stream: AsyncIterable<{ raw(): Uint8Array }>;
  try {
    stream = connection.chdb.queryStream(query, { format, signal });
  } catch (err) {
    // The engine streams only a SELECT; SHOW, DESCRIBE, EXISTS and EXPLAIN it answers in one
    // piece (their results are a few rows).
    if (!isNotStreamable(err)) throw err;
    yield (await connection.chdb.queryAsync(query, { format, signal })).bytes();
    return;
  }
  for await (const block of stream) yield block.raw();
}

/** The embedded engine refused to stream a statement (it streams a SELECT only). */
function isNotStreamable(err: unknown): boolean {
  return (
    clickHouseCode(err) === String(ClickHouseCode.BAD_ARGUMENTS) &&
    (err as Error).message.includes("Streaming query is not supported")
  );
}

type ChdbConnectionFactory = (o: { path: string }) => unknown;

/** chdb's Connection factory, or EMBEDDED_UNAVAILABLE when the package is not installed. */
async function loadChdb(): Promise<ChdbConnectionFactory> {
  try {
    // A variable specifier: an image built for a ClickHouse server leaves chdb (an optional
    // dependency) out, and the build must not need its types either.
    const specifier = "chdb/connection";
    const chdb = (await import(specifier)) as {
      createChdbConnection: ChdbConnectionFactory;
    };
    return chdb.createChdbConnection;
  } catch (err) {
    throw new SinkError(
      "EMBEDDED_UNAVAILABLE",
      "the embedded ClickHouse engine (the chdb package) is not installed",
      {
        cause: err,
        hint: "run npm install with optional dependencies, or set CLICKHOUSE_URL to use a ClickHouse server",
      },
    );
  }
}

/**
 * Refuses a ClickHouse whose profile does not let inserts set PINNED_INSERT_SETTINGS (a
 * readonly user, a constraint): there an insert could return before its rows are stored, and
 * a checkpoint written after it could run ahead of the data.
 */
export async function checkPinnedSettings(
  client: ClickHouseClient,
  location: string,
): Promise<void> {
  try {
    await client.command({
      query: "SELECT 1",
      clickhouse_settings: PINNED_INSERT_SETTINGS,
    });
  } catch (err) {
    if (!REFUSED_SETTING.has(clickHouseCode(err) ?? "")) throw err;
    const pinned = Object.entries(PINNED_INSERT_SETTINGS)
      .map(([k, v]) => `${k}=${v}`)
      .join(", ");
    const readOnlyUser =
      clickHouseCode(err) === String(ClickHouseCode.READONLY);
    throw new SinkError(
      "SETTINGS_NOT_PINNABLE",
      readOnlyUser
        ? `ClickHouse at ${location} does not let the exporter's inserts set ${pinned}: the user is read-only (readonly = 1), and this command writes, so it needs a user that may write (${(err as Error).message.replace(/^Code: \d+\. DB::Exception: /, "").trim()})`
        : `ClickHouse at ${location} does not let the exporter's inserts set ${pinned}: ${(err as Error).message}`,
      {
        cause: err,
        hint: readOnlyUser
          ? `the commands that write need the exporter's user, with a profile that is not readonly=1; a reader's credentials serve the commands that only read: ${READ_COMMANDS}`
          : "without them an insert may return before its rows are stored, so no checkpoint could be trusted; give the exporter's user a profile that is not readonly=1 and has no constraint on these settings",
      },
    );
  }
}

/** The commands that open a warehouse read-only, for messages. */
const READ_COMMANDS =
  "status, query, report, export, windows list, hold list, detect run, doctor";

/** The answers of a server that will not let a query change a setting. */
const REFUSED_SETTING = new Set(
  [ClickHouseCode.READONLY, ClickHouseCode.SETTING_CONSTRAINT_VIOLATION].map(
    String,
  ),
);
