// The cluster rendering rules on statements the migrations do not hold yet (materialized views,
// mixed ALTERs, drops), the sharding keys, insert and read settings, and the configuration
// combinations that are refused.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/index.js";
import {
  clientSettings,
  clusterInsertSettings,
  consistentReadSettings,
  mutationTarget,
  renderForMode,
  shardingKey,
  SINGLE,
  type ClusterMode,
} from "../../../src/warehouse/cluster.js";
import { renderSql } from "../../../src/warehouse/migrate.js";

const distributed: ClusterMode = {
  kind: "cluster",
  name: "c1",
  replicated: true,
  distributed: true,
  keeperPath: "/ch/tables",
};
const replicated: ClusterMode = { ...distributed, distributed: false };

const table = (name: string, engine: string, orderBy: string) => `
CREATE TABLE IF NOT EXISTS {{db}}.${name} {{on_cluster}}
(
    at     DateTime64(3, 'UTC'),
    day    Date,
    job    LowCardinality(String),
    key    String,
    n      UInt64
)
ENGINE = ${engine}
ORDER BY ${orderBy};`;

describe("rendering for a cluster", () => {
  it("shards by the first sorting-key column that is not a date or time", () => {
    expect(shardingKey(table("t", "MergeTree", "(at, key, job)"))).toBe(
      "cityHash64(key)",
    );
    expect(shardingKey(table("t", "MergeTree", "(job, at)"))).toBe(
      "cityHash64(job)",
    );
    expect(shardingKey(table("t", "MergeTree", "n"))).toBe("cityHash64(n)");
    expect(shardingKey(table("t", "MergeTree", "(day, at)"))).toBe(
      "cityHash64(day, at)",
    );
  });

  it("keeps a new plain table whole in single mode and splits it in distributed mode", () => {
    const text = table("clicks", "ReplacingMergeTree(n)", "(at, key)");
    const [single] = renderSql(text, { db: "d" });
    expect(single).toContain("CREATE TABLE IF NOT EXISTS `d`.clicks\n(");
    expect(single).toContain("ENGINE = ReplacingMergeTree(n)");
    const [local, dist] = renderSql(text, { db: "d", mode: distributed });
    expect(local).toContain("`d`.clicks_local ON CLUSTER `c1`");
    expect(local).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/ch/tables/{shard}/d/clicks_local', '{replica}', n)",
    );
    expect(dist).toBe(
      "CREATE TABLE IF NOT EXISTS `d`.clicks ON CLUSTER `c1` AS `d`.clicks_local ENGINE = Distributed('c1', 'd', 'clicks_local', cityHash64(key))",
    );
  });

  it("keeps the bookkeeping tables on every node, not sharded", () => {
    const [only, ...more] = renderSql(
      table("checkpoints", "ReplacingMergeTree(at)", "key"),
      { db: "d", mode: distributed },
    );
    expect(more).toEqual([]);
    expect(only).toContain(
      "ReplicatedReplacingMergeTree('/ch/tables/all/d/checkpoints', '{shard}-{replica}', at)",
    );
  });

  it("leaves engines outside the MergeTree family as they are", () => {
    const stmts = renderSql(
      "CREATE TABLE IF NOT EXISTS {{db}}.buf {{on_cluster}} (a UInt8) ENGINE = Memory",
      { db: "d", mode: distributed },
    );
    expect(stmts).toEqual([
      "CREATE TABLE IF NOT EXISTS `d`.buf ON CLUSTER `c1` (a UInt8) ENGINE = Memory",
    ]);
  });

  it("points a materialized view at the local table it fires on, and requires TO", () => {
    const mv =
      "CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.per_day {{on_cluster}} TO {{db}}.daily AS SELECT toDate(start_time) AS day, count() AS n FROM {{db}}.sessions GROUP BY day";
    expect(renderForMode(mv, distributed, "d")).toEqual([
      "CREATE MATERIALIZED VIEW IF NOT EXISTS {{db}}.per_day ON CLUSTER `c1` TO {{db}}.daily AS SELECT toDate(start_time) AS day, count() AS n FROM {{db}}.sessions_local GROUP BY day",
    ]);
    expect(renderForMode(mv, replicated, "d")[0]).toContain(
      "FROM {{db}}.sessions GROUP BY",
    );
    expect(() =>
      renderForMode(
        "CREATE MATERIALIZED VIEW {{db}}.x {{on_cluster}} ENGINE = MergeTree ORDER BY a AS SELECT 1 AS a",
        distributed,
        "d",
      ),
    ).toThrow(/no TO table/);
  });

  it("sends column changes to both tables, mutations to the local one, and refuses a mix", () => {
    const add = renderForMode(
      "ALTER TABLE {{db}}.sessions {{on_cluster}} ADD COLUMN IF NOT EXISTS k String DEFAULT concat(a, ','), DROP COLUMN IF EXISTS z",
      distributed,
      "d",
    );
    expect(add.map((s) => s.split(" ON CLUSTER")[0])).toEqual([
      "ALTER TABLE {{db}}.sessions_local",
      "ALTER TABLE {{db}}.sessions",
    ]);
    expect(
      renderForMode(
        "ALTER TABLE {{db}}.sessions {{on_cluster}} MODIFY TTL toDateTime(start_time) + INTERVAL 3 DAY",
        distributed,
        "d",
      ),
    ).toHaveLength(1);
    expect(() =>
      renderForMode(
        "ALTER TABLE {{db}}.sessions {{on_cluster}} ADD COLUMN k String, MATERIALIZE COLUMN k",
        distributed,
        "d",
      ),
    ).toThrow(/mixes column changes/);
  });

  it("refuses a view joining two sharded tables, and takes one joining a table kept whole", () => {
    const view = (other: string) =>
      `CREATE VIEW IF NOT EXISTS {{db}}.v {{on_cluster}} AS SELECT s.id FROM {{db}}.sessions AS s LEFT JOIN {{db}}.${other} AS o ON o.id = s.id`;
    expect(() => renderForMode(view("clicks"), distributed, "d")).toThrow(
      /joins sessions, clicks/,
    );
    expect(renderForMode(view("users"), distributed, "d")).toHaveLength(1);
    expect(renderForMode(view("clicks"), replicated, "d")).toHaveLength(1);
  });

  it("optimizes and truncates the local table of a sharded one", () => {
    expect(
      renderForMode(
        "OPTIMIZE TABLE {{db}}.sessions {{on_cluster}} FINAL",
        distributed,
        "d",
      ),
    ).toEqual(["OPTIMIZE TABLE {{db}}.sessions_local ON CLUSTER `c1` FINAL"]);
    expect(
      renderForMode(
        "TRUNCATE TABLE {{db}}.checkpoints {{on_cluster}}",
        distributed,
        "d",
      ),
    ).toEqual(["TRUNCATE TABLE {{db}}.checkpoints ON CLUSTER `c1`"]);
  });

  it("moves partitions between and exchanges the local tables of sharded ones", () => {
    expect(
      renderForMode(
        "ALTER TABLE {{db}}.sessions_rebuilt {{on_cluster}} ATTACH PARTITION ALL FROM {{db}}.sessions",
        distributed,
        "d",
      ),
    ).toEqual([
      "ALTER TABLE {{db}}.sessions_rebuilt_local ON CLUSTER `c1` ATTACH PARTITION ALL FROM {{db}}.sessions_local",
    ]);
    expect(
      renderForMode(
        "EXCHANGE TABLES {{db}}.sessions_rebuilt AND {{db}}.sessions {{on_cluster}}",
        distributed,
        "d",
      ),
    ).toEqual([
      "EXCHANGE TABLES {{db}}.sessions_rebuilt_local AND {{db}}.sessions_local ON CLUSTER `c1`",
    ]);
    expect(
      renderForMode(
        "EXCHANGE TABLES {{db}}.sessions_rebuilt AND {{db}}.sessions {{on_cluster}}",
        replicated,
        "d",
      ),
    ).toEqual([
      "EXCHANGE TABLES {{db}}.sessions_rebuilt AND {{db}}.sessions ON CLUSTER `c1`",
    ]);
    expect(
      renderForMode(
        "ALTER TABLE {{db}}.sessions_rebuilt {{on_cluster}} ATTACH PARTITION ALL FROM {{db}}.sessions",
        SINGLE,
        "d",
      ),
    ).toEqual([
      "ALTER TABLE {{db}}.sessions_rebuilt ATTACH PARTITION ALL FROM {{db}}.sessions",
    ]);
  });

  it("drops both tables of a sharded one", () => {
    expect(
      renderForMode(
        "DROP TABLE IF EXISTS {{db}}.sessions {{on_cluster}}",
        distributed,
        "d",
      ),
    ).toEqual([
      "DROP TABLE IF EXISTS {{db}}.sessions_local ON CLUSTER `c1`",
      "DROP TABLE IF EXISTS {{db}}.sessions ON CLUSTER `c1`",
    ]);
  });

  it("refuses a statement without {{on_cluster}} on a cluster", () => {
    expect(() =>
      renderForMode(
        "ALTER TABLE {{db}}.sessions DELETE WHERE 1",
        replicated,
        "d",
      ),
    ).toThrow(/on_cluster/);
    expect(
      renderForMode("ALTER TABLE {{db}}.sessions DELETE WHERE 1", SINGLE, "d"),
    ).toHaveLength(1);
  });

  it("inserts synchronously into Distributed tables, reads back from the same replicas, and writes checkpoints with quorum", () => {
    expect(clusterInsertSettings(distributed, "sessions")).toEqual({});
    expect(clusterInsertSettings(distributed, "checkpoints")).toEqual({
      insert_quorum: "auto",
      insert_quorum_parallel: 0,
    });
    expect(clusterInsertSettings(SINGLE, "checkpoints")).toEqual({});
    expect(consistentReadSettings({ cluster: replicated })).toEqual({
      select_sequential_consistency: 1,
    });
    expect(consistentReadSettings({ cluster: SINGLE })).toEqual({});
    // A reader may change no setting, and decides nothing from what it reads.
    expect(
      consistentReadSettings({ cluster: replicated, readOnly: true }),
    ).toEqual({});
    expect(clientSettings(distributed)).toEqual({
      insert_distributed_sync: 1,
      load_balancing: "in_order",
      distributed_product_mode: "global",
    });
    expect(clientSettings(replicated)).toEqual({});
    expect(mutationTarget(distributed, "d", "agg_histogram")).toBe(
      "`d`.`agg_histogram_local` ON CLUSTER `c1`",
    );
    expect(mutationTarget(distributed, "d", "checkpoints")).toBe(
      "`d`.`checkpoints` ON CLUSTER `c1`",
    );
  });
});

describe("cluster configuration", () => {
  const base = {
    SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
    SESSIONHOUSE_API_KEY: "test-key-0000",
  };
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig({ env: { ...base, ...env } });
      return [];
    } catch (err) {
      return (err as ConfigError).problems as string[];
    }
  };

  it("reads the cluster settings", () => {
    const ch = loadConfig({
      env: {
        ...base,
        CLICKHOUSE_URL: "http://ch:8123",
        CLICKHOUSE_CLUSTER: "prod",
        CLICKHOUSE_REPLICATED: "true",
        CLICKHOUSE_DISTRIBUTED: "true",
        CLICKHOUSE_KEEPER_PATH: "/keeper/sh",
      },
    }).clickhouse;
    expect([ch.cluster, ch.replicated, ch.distributed, ch.keeperPath]).toEqual([
      "prod",
      true,
      true,
      "/keeper/sh",
    ]);
  });

  it("refuses the combinations that cannot work, saying why", () => {
    expect(problems({ CLICKHOUSE_REPLICATED: "true" })).toEqual([
      expect.stringMatching(/REPLICATED .*needs CLICKHOUSE_CLUSTER/),
    ]);
    expect(problems({ CLICKHOUSE_CLUSTER: "prod" })).toEqual([
      expect.stringMatching(/needs CLICKHOUSE_URL: the embedded engine/),
    ]);
    expect(
      problems({
        CLICKHOUSE_URL: "https://abc.eu-west-1.aws.clickhouse.cloud:8443",
        CLICKHOUSE_CLUSTER: "default",
      }),
    ).toEqual([expect.stringMatching(/ClickHouse Cloud, which replicates/)]);
    expect(
      problems({
        CLICKHOUSE_URL: "http://ch:8123",
        CLICKHOUSE_CLUSTER: "prod",
        CLICKHOUSE_DISTRIBUTED: "true",
      }),
    ).toEqual([
      expect.stringMatching(/DISTRIBUTED .*needs CLICKHOUSE_REPLICATED/),
    ]);
    expect(
      problems({
        CLICKHOUSE_URL: "http://ch:8123",
        CLICKHOUSE_CLUSTER: "prod",
        CLICKHOUSE_KEEPER_PATH: "tables'x",
      }),
    ).toEqual([expect.stringMatching(/CLICKHOUSE_KEEPER_PATH must be/)]);
  });
});
