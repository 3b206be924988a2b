// ClickHouse's checks: reachable, its version, the database, the exporter's grants and Grafana
// reader's, the insert settings, the cluster with its macros and Keeper, the cold volume of
// the tiers and the free disk. Every question is a read (src/warehouse/preflight.ts).
import type { Config } from "../../config/index.js";
import {
  READER_SETTINGS,
  type ClickHouseProbe,
} from "../../warehouse/index.js";
import {
  fail,
  ok,
  Skip,
  skipped,
  spaceFinding,
  warn,
  type Finding,
  familySpecs,
} from "./check.js";
import {
  missingExporterGrants,
  readerGrantProblems,
  readerProfileProblems,
} from "./grants.js";

export interface ClickHouseCheckContext {
  config: Config;
  /** The open probe; throws what opening it threw (a Skip when there is nothing to open yet). */
  clickhouse(): Promise<ClickHouseProbe>;
}

/** The probe for a check that needs it: a Skip naming why, when it could not be opened. */
async function probe(ctx: ClickHouseCheckContext): Promise<ClickHouseProbe> {
  try {
    return await ctx.clickhouse();
  } catch (err) {
    if (err instanceof Skip) throw err;
    throw new Skip("ClickHouse cannot be opened (see clickhouse reachable)");
  }
}

/** A probe through which this process writes: not the read access of a running service. */
async function writable(ctx: ClickHouseCheckContext): Promise<ClickHouseProbe> {
  const p = await probe(ctx);
  if (p.service)
    throw new Skip(
      `read through the running service (pid ${p.service.pid}), which holds the data directory and writes`,
    );
  return p;
}

function where(p: ClickHouseProbe): string {
  if (p.service)
    return `the embedded engine at ${p.location}, through the read access of sessionhouse run (pid ${p.service.pid})`;
  return p.kind === "embedded"
    ? `the embedded engine at ${p.location}`
    : `the server at ${p.location}`;
}

async function reachable(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await ctx.clickhouse();
  return ok(`${where(p)} answers`);
}

async function version(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await probe(ctx);
  return ok(`ClickHouse ${await p.version()} (${p.kind})`);
}

async function database(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await probe(ctx);
  const db = ctx.config.clickhouse.database;
  return (await p.databaseExists(db))
    ? ok(`database ${db} exists`)
    : ok(`database ${db} does not exist yet: migrate (or run) creates it`);
}

/** The exporter's user, as the server knows it (the URL's user wins over CLICKHOUSE_USER). */
function exporterUser(config: Config): string {
  const url = config.clickhouse.url
    ? new URL(config.clickhouse.url)
    : undefined;
  return (url && decodeURIComponent(url.username)) || config.clickhouse.user;
}

async function grants(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await writable(ctx);
  if (p.kind === "embedded") return ok("embedded: all rights");
  const user = exporterUser(ctx.config);
  const readonly = await p.readonlyLevel();
  if (readonly !== 0)
    return fail(
      `user ${user} runs with readonly = ${readonly}: no INSERT, no CREATE, no ALTER`,
      `give ${user} a settings profile with readonly = 0 (and the grants below); a readonly user is for Grafana, not the exporter`,
    );
  const db = ctx.config.clickhouse.database;
  const missing = missingExporterGrants(
    await p.grants(),
    db,
    await p.databaseExists(db),
  );
  if (missing.length > 0)
    return fail(
      `user ${user} lacks ${missing.join(", ")} on ${db} (SHOW GRANTS)`,
      `GRANT ${missing.join(", ")} ON ${missing.includes("CREATE DATABASE") ? "*.*" : `${db}.*`} TO ${user}`,
    );
  return ok(`user ${user} may read, insert, create, alter and drop on ${db}`);
}

async function readerGrants(ctx: ClickHouseCheckContext): Promise<Finding> {
  const reader = ctx.config.clickhouse.grafanaReader;
  if (reader === undefined)
    return skipped("no Grafana reader configured (GRAFANA_CLICKHOUSE_USER)");
  const p = await probe(ctx);
  if (p.kind === "embedded")
    return skipped("the embedded engine has no users: Grafana reads a server");
  const db = ctx.config.clickhouse.database;
  const fix = `run dashboards/provisioning/clickhouse/grafana-reader.sh again (see docs/dashboards.md, Grafana's ClickHouse user)`;
  const grants = await p.grantsOf(reader);
  if (grants === undefined)
    return fail(`Grafana's reader ${reader} does not exist on the server`, fix);
  const problems = readerGrantProblems(grants, db);
  // The script's profile is `<user>_profile`, readonly = 1.
  const profileName = `${reader}_profile`;
  const profile = await p.settingsProfile(profileName);
  if (profile.state === "absent")
    problems.push(`no settings profile ${profileName} (readonly = 1)`);
  else if (
    profile.state === "found" &&
    !/\breadonly\s*=\s*1\b/.test(profile.statement)
  )
    problems.push(
      `its settings profile ${profileName} does not set readonly = 1`,
    );
  if (profile.state === "found")
    problems.push(...readerProfileProblems(profile.statement));
  if (problems.length > 0)
    return fail(`Grafana's reader ${reader}: ${problems.join("; ")}`, fix);
  const profileText =
    profile.state === "denied"
      ? `; its profile not read (the exporter's user may not SHOW SETTINGS PROFILES)`
      : `, profile ${profileName} readonly = 1 (changeable: ${[...READER_SETTINGS.keys()].join(", ")})`;
  return ok(
    `Grafana's reader ${reader} may SELECT on ${db} only, without sessions.raw${profileText}`,
  );
}

async function insertSettings(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await writable(ctx);
  // Opened read-only, as every check reads: the engine in this process has no profile either.
  if (p.kind === "embedded")
    return ok("embedded: no settings profile constrains a query");
  await p.pinInsertSettings();
  return ok("a query may set async_insert = 0 and insert_deduplicate = 1");
}

async function cluster(ctx: ClickHouseCheckContext): Promise<Finding> {
  const name = ctx.config.clickhouse.cluster;
  if (name === undefined)
    return skipped("CLICKHOUSE_CLUSTER is not set: one server");
  const p = await probe(ctx);
  const c = await p.cluster(name);
  if (c.hosts === 0)
    return fail(
      `cluster ${name} is not in system.clusters`,
      "set CLICKHOUSE_CLUSTER to a cluster of the server's remote_servers configuration",
    );
  return ok(`cluster ${name}: ${c.hosts} hosts in ${c.shards} shards`);
}

/** The macros the replicated tables' engine names. */
const REPLICA_MACROS = ["shard", "replica"] as const;

async function macros(ctx: ClickHouseCheckContext): Promise<Finding> {
  if (!ctx.config.clickhouse.replicated)
    return skipped("CLICKHOUSE_REPLICATED is not set: no replicated tables");
  const p = await probe(ctx);
  const have = await p.macros();
  const missing = REPLICA_MACROS.filter((m) => !(m in have));
  if (missing.length > 0)
    return fail(
      `system.macros has no ${missing.join(", ")}`,
      "define the {shard} and {replica} macros in each server's configuration (<macros>)",
    );
  return ok(
    `macros ${REPLICA_MACROS.map((m) => `${m} = ${have[m]}`).join(", ")}`,
  );
}

async function keeper(ctx: ClickHouseCheckContext): Promise<Finding> {
  if (!ctx.config.clickhouse.replicated)
    return skipped("CLICKHOUSE_REPLICATED is not set: no Keeper needed");
  const p = await probe(ctx);
  const n = await p.readKeeperRoot();
  return ok(`Keeper answers (system.zookeeper: ${n} nodes under /)`);
}

async function tiers(ctx: ClickHouseCheckContext): Promise<Finding> {
  const r = ctx.config.retention;
  const tiered = Object.entries(r.tables)
    .filter(([, t]) => t.hotDays > 0)
    .map(([table]) => table);
  if (tiered.length === 0)
    return skipped(
      "no table has hotDays (SESSIONHOUSE_HOT_DAYS, retention.tables)",
    );
  const p = await probe(ctx);
  const volumes = (await p.storagePolicies()).filter(
    (v) => v.volume === r.coldVolume,
  );
  if (volumes.length === 0)
    return warn(
      `hotDays is set for ${tiered.join(", ")}, and no storage policy has a volume ${r.coldVolume}: rows stay where they are`,
      "add the volume to the tables' storage policy on the server, or set SESSIONHOUSE_COLD_VOLUME to a volume it has",
    );
  return ok(
    `volume ${r.coldVolume} in ${volumes.map((v) => `policy ${v.policy} (disks ${v.disks.join(", ")})`).join(", ")}`,
  );
}

async function freeDisk(ctx: ClickHouseCheckContext): Promise<Finding> {
  const p = await probe(ctx);
  const disks = await p.disks();
  if (disks.length === 0) return skipped("system.disks lists no disk");
  const findings = disks.map((d) =>
    spaceFinding(`disk ${d.name}`, d.freeBytes, d.totalBytes),
  );
  const worst = findings.find((f) => f.status !== "ok");
  return worst ?? ok(findings.map((f) => f.found).join("; "));
}

export const CLICKHOUSE_CHECKS = familySpecs<ClickHouseCheckContext>(
  "clickhouse",
  ["reachable"],
  [
    ["reachable", reachable],
    ["version", version],
    ["database", database],
    ["grants", grants],
    ["grafana reader", readerGrants],
    ["insert settings", insertSettings],
    ["cluster", cluster],
    ["macros", macros],
    ["keeper", keeper],
    ["tiers", tiers],
    ["free disk", freeDisk],
  ],
);
