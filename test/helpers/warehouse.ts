// A real ClickHouse for a test file: the embedded engine by default (one data directory per
// test process), the server at CLICKHOUSE_URL when set, or a testcontainers ClickHouse when
// SESSIONHOUSE_TEST_CONTAINERS=1 on a machine with Docker. Every file gets a fresh database.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { loadConfig, type Config } from "../../src/config/index.js";
import { backfillStream, SESSIONS_STREAM } from "../../src/pipeline/names.js";
import { writeCheckpoint } from "../../src/warehouse/bookkeeping.js";
import { openWarehouse, type Warehouse } from "../../src/warehouse/client.js";
import { migrate } from "../../src/warehouse/migrate.js";
import { retentionSettings } from "../../src/warehouse/retention.js";
import { quoteIdent } from "../../src/warehouse/sql.js";
import { testTmpDir } from "./run-tmp.js";
import { replaySchema } from "./schema-template.js";

let dataDir: string | undefined;
let containerUrl: string | undefined;

/** The embedded data directory of this test process (one engine per process). */
export function testDataDir(): string {
  dataDir ??= mkdtempSync(
    join(testTmpDir(), `sessionhouse-test-${process.pid}-`),
  );
  return dataDir;
}

async function clickhouseUrl(): Promise<string | undefined> {
  if (process.env.CLICKHOUSE_URL) return process.env.CLICKHOUSE_URL;
  if (process.env.SESSIONHOUSE_TEST_CONTAINERS !== "1") return undefined;
  if (!containerUrl) {
    const { GenericContainer, Wait } = await import("testcontainers");
    const container = await new GenericContainer(
      "clickhouse/clickhouse-server:25.8",
    )
      .withExposedPorts(8123)
      .withEnvironment({
        CLICKHOUSE_USER: "default",
        CLICKHOUSE_PASSWORD: "test",
        CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT: "1",
      })
      .withWaitStrategy(Wait.forHttp("/ping", 8123))
      .start();
    containerUrl = `http://default:test@${container.getHost()}:${container.getMappedPort(8123)}`;
  }
  return containerUrl;
}

export function freshDatabaseName(): string {
  return `t_${randomBytes(6).toString("hex")}`;
}

/** A config for tests: API settings given, ClickHouse as above, a fresh database. */
export async function testConfig(
  env: Record<string, string | undefined> = {},
  database = freshDatabaseName(),
): Promise<Config> {
  const url = await clickhouseUrl();
  return loadConfig({
    env: {
      SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: "test-key-0000",
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(url ? { CLICKHOUSE_URL: url } : {}),
      ...env,
    },
  });
}

export async function migratedWarehouse(config: Config): Promise<Warehouse> {
  const w = await openWarehouse(config);
  // The run's migrated schema replayed (schema-template.ts), then `migrate` as on any database.
  await replaySchema(w);
  await migrate(w, { retention: retentionSettings(config) });
  return w;
}

/** The tables of `w` (views aside) holding rows, or whose row count the engine does not keep. */
async function tablesWithRows(w: Warehouse): Promise<Set<string>> {
  const rows = await select<{ name: string }>(
    w,
    "SELECT name FROM system.tables WHERE database = {db:String} AND engine NOT LIKE '%View' AND (total_rows IS NULL OR total_rows > 0)",
    { db: w.database },
  );
  return new Set(rows.map((r) => r.name));
}

export interface ReusedDatabase {
  /** The database's name: the `database` of testConfig for every case that uses it. */
  readonly name: string;
  /**
   * The database as a fresh migrated one is: migrated on the first call, on the next ones
   * emptied (every table holding rows that the migration did not write is truncated; a
   * TRUNCATE also forgets the insert deduplication tokens a table kept). Left open: `close`
   * closes it.
   */
  fresh(config: Config): Promise<Warehouse>;
  close(): Promise<void>;
}

/**
 * One migrated database for the cases of a test file that each need a fresh one: emptying it
 * takes a few statements where a new one replays the schema (seconds).
 */
export function reusedDatabase(): ReusedDatabase {
  const name = freshDatabaseName();
  let open: { w: Warehouse; kept: Set<string> } | undefined;
  return {
    name,
    async fresh(config) {
      if (config.clickhouse.database !== name)
        throw new Error(
          `reusedDatabase: the config names ${config.clickhouse.database}, not ${name}`,
        );
      if (!open) {
        const w = await migratedWarehouse(config);
        open = { w, kept: await tablesWithRows(w) };
        return w;
      }
      const { w, kept } = open;
      for (const table of await tablesWithRows(w))
        if (!kept.has(table))
          await w.client.command({
            query: `TRUNCATE TABLE ${quoteIdent(w.database)}.${quoteIdent(table)}`,
          });
      return w;
    },
    async close() {
      await open?.w.close();
      open = undefined;
    },
  };
}

export async function select<T = Record<string, unknown>>(
  w: Warehouse,
  sql: string,
  params: Record<string, unknown> = {},
): Promise<T[]> {
  const rs = await w.client.query({
    query: sql.replaceAll("{db}", quoteIdent(w.database)),
    query_params: params,
    format: "JSONEachRow",
  });
  return rs.json<T>();
}

/**
 * Records that the sessions stream is synced from `fromIso` to `toIso`, as a backfill of that
 * range records it once its rows are stored (its own checkpoint stream; the incremental one is
 * left as it is): for tests that insert rows themselves and archive their months (archive
 * export refuses a month no checkpoint covers).
 */
export async function markSessionsSynced(
  w: Warehouse,
  fromIso: string,
  toIso: string,
): Promise<void> {
  const [fromMs, toMs] = [Date.parse(fromIso), Date.parse(toIso)];
  await writeCheckpoint(
    w,
    backfillStream(SESSIONS_STREAM, fromMs, toMs),
    toMs,
    {},
    { retries: 0 },
  );
}

/**
 * Gives the embedded data directory `dataDir` (created when missing) the migrated schema in
 * `database` (the configuration's default when not given), as `sessionhouse migrate` would
 * leave it: the run's schema replayed (schema-template.ts), then `migrate`, which finds every
 * file applied. The engine is closed afterwards, so a CLI child can open the directory; this
 * process must hold no other data directory meanwhile (the engine allows one per process).
 * For tests that start the CLI on a data directory and are not about its first migration.
 */
export async function migratedDataDir(
  dataDir: string,
  database?: string,
): Promise<void> {
  const config = loadConfig({
    env: {
      SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: "test-key-0000",
      SESSIONHOUSE_DATA_DIR: dataDir,
      SESSIONHOUSE_LOG_LEVEL: "silent",
      ...(database === undefined ? {} : { CLICKHOUSE_DATABASE: database }),
    },
  });
  const w = await migratedWarehouse(config);
  await w.close();
}
