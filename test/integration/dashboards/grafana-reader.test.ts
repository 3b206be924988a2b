// Grafana's ClickHouse user (dashboards/provisioning/clickhouse/grafana-reader.sh), checked
// without a ClickHouse server: the script runs with a stand-in `clickhouse` that keeps the SQL
// it is given, and the embedded engine parses every statement (formatQuery) and evaluates the
// quoted names and password. The embedded engine has no access control, so what a server does
// with the statements (the profile's constraints, the partial revokes, the plugin's
// max_execution_time under readonly = 1) is not run here.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { READER_SETTINGS } from "../../../src/warehouse/reader-settings.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import {
  loadDashboards,
  queryVariables,
  REPO_ROOT,
} from "../../helpers/dashboards.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const SCRIPT = join(
  REPO_ROOT,
  "dashboards/provisioning/clickhouse/grafana-reader.sh",
);
const ENV = {
  CLICKHOUSE_USER: "admin",
  CLICKHOUSE_PASSWORD: "admin-password",
  CLICKHOUSE_DB: "session`house",
  GRAFANA_CLICKHOUSE_USER: "grafana\\reader`",
  GRAFANA_CLICKHOUSE_PASSWORD: "p'a\\ss\"wörd\\",
};

let w: Warehouse;
let statements: string[];

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  const dir = mkdtempSync(join(testTmpDir(), "grafana-reader-"));
  const fake = join(dir, "clickhouse");
  writeFileSync(
    fake,
    `#!/bin/bash\nprintf '%s\\n' "$*" > "${dir}/args"\ncat > "${dir}/sql"\n`,
  );
  chmodSync(fake, 0o755);
  execFileSync("bash", [SCRIPT], {
    env: { PATH: `${dir}:${process.env.PATH ?? ""}`, ...ENV },
  });
  expect(readFileSync(join(dir, "args"), "utf8")).toContain(
    `client --user ${ENV.CLICKHOUSE_USER} --password ${ENV.CLICKHOUSE_PASSWORD}`,
  );
  statements = readFileSync(join(dir, "sql"), "utf8")
    .split(/;\n/)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}, 60_000);

afterAll(async () => {
  await w.close();
});

async function scalar(sql: string, params: Record<string, unknown> = {}) {
  const rs = await w.client.query({
    query: sql,
    query_params: params,
    format: "JSONCompact",
  });
  const body = await rs.json<unknown[]>();
  return { value: body.data[0]?.[0], name: body.meta?.[0]?.name };
}

const formatted = async (s: string) =>
  String((await scalar("SELECT formatQuery({q:String})", { q: s })).value);

const find = (pattern: RegExp) => statements.filter((s) => pattern.test(s));

describe("grafana-reader.sh", () => {
  it("writes statements the engine parses", async () => {
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) expect(await formatted(s), s).not.toBe("");
  });

  it("quotes the names and the password, whatever they hold", async () => {
    const [create] = find(/^CREATE USER/);
    const [, user = "", password = ""] =
      /^CREATE USER IF NOT EXISTS (`(?:[^`\\]|\\.)*`) .* BY ('(?:[^'\\]|\\.)*')$/.exec(
        create ?? "",
      ) ?? [];
    expect((await scalar(`SELECT 1 AS ${user}`)).name).toBe(
      ENV.GRAFANA_CLICKHOUSE_USER,
    );
    expect((await scalar(`SELECT ${password}`)).value).toBe(
      ENV.GRAFANA_CLICKHOUSE_PASSWORD,
    );
    const [grant] = find(/^GRANT /);
    const [, db = ""] =
      /^GRANT SELECT ON (`(?:[^`\\]|\\.)*`)\.\* TO /.exec(grant ?? "") ?? [];
    expect((await scalar(`SELECT 1 AS ${db}`)).name).toBe(ENV.CLICKHOUSE_DB);
  });

  it("gives the user readonly = 1, caps on memory, time and a result's size, and only the readers' settings to change", async () => {
    const [profile] = find(/^CREATE SETTINGS PROFILE/);
    const text = await formatted(profile ?? "");
    expect(text).toMatch(/\breadonly = 1 CONST\b/);
    expect(text).toMatch(/\bmax_memory_usage = \d+ CONST\b/);
    expect(text).toMatch(/\bmax_result_rows = \d+ CONST\b/);
    expect(text).toMatch(/\bmax_result_bytes = \d+ CONST\b/);
    expect(text).toMatch(/\bresult_overflow_mode = 'throw' CONST\b/);
    const [, value, min, max] =
      /\bmax_execution_time = (\d+) MIN (\d+) MAX (\d+) CHANGEABLE_IN_READONLY\b/.exec(
        text,
      ) ?? [];
    expect(Number(min)).toBeGreaterThanOrEqual(1);
    expect(Number(value)).toBeLessThanOrEqual(Number(max));
    // Exactly the settings of the readers' allow-list may change, none otherwise.
    expect(text.match(/CHANGEABLE_IN_READONLY|WRITABLE/g)).toHaveLength(
      READER_SETTINGS.size,
    );
    for (const name of READER_SETTINGS.keys())
      expect(text).toMatch(
        new RegExp(`\\b${name}\\b[^,]*CHANGEABLE_IN_READONLY`),
      );
    // The data source's query timeout is what the plugin sets max_execution_time to.
    const ds = parse(
      readFileSync(
        join(REPO_ROOT, "dashboards/provisioning/datasources/clickhouse.yaml"),
        "utf8",
      ),
    ) as { datasources: { jsonData: { queryTimeout: number } }[] };
    const timeout = ds.datasources[0]?.jsonData.queryTimeout ?? 0;
    expect(timeout).toBeGreaterThanOrEqual(Number(min));
    expect(timeout).toBeLessThanOrEqual(Number(max));
    // The user gets the profile, also when it existed before (the script runs again).
    const [alter] = find(/^ALTER USER/);
    expect(await formatted(alter ?? "")).toMatch(
      /DROP ALL SETTINGS, DROP ALL PROFILES, ADD PROFILE /,
    );
  });

  it("runs in a server that honours CHANGEABLE_IN_READONLY", () => {
    const compose = parse(
      readFileSync(join(REPO_ROOT, "docker-compose.yml"), "utf8"),
      { merge: true },
    ) as { services: Record<string, { volumes?: string[] }> };
    const file = "dashboards/provisioning/clickhouse/access-control.xml";
    expect(compose.services.clickhouse?.volumes).toContain(
      `./${file}:/etc/clickhouse-server/config.d/access-control.xml:ro`,
    );
    expect(readFileSync(join(REPO_ROOT, file), "utf8")).toMatch(
      /<access_control_improvements>\s*<settings_constraints_replace_previous>true<\/settings_constraints_replace_previous>\s*<\/access_control_improvements>/,
    );
  });

  it("grants SELECT on the database only, without the raw columns", async () => {
    const grants = find(/^(GRANT|REVOKE) /);
    expect(grants[0]).toMatch(/^REVOKE ALL ON \*\.\* FROM /);
    expect(find(/^GRANT /)).toHaveLength(1);
    expect(find(/^GRANT /)[0]).toMatch(/^GRANT SELECT ON `[^.]+`\.\* TO /);
    // Every table and view with a raw column has it held back, and only those.
    const rs = await w.client.query({
      query: `SELECT DISTINCT table FROM system.columns
              WHERE database = {db:String} AND name = 'raw' ORDER BY table`,
      query_params: { db: w.database },
      format: "JSONEachRow",
    });
    const withRaw = (await rs.json<{ table: string }>()).map((r) => r.table);
    expect(withRaw).toEqual(
      expect.arrayContaining(["dead_letters", "sessions"]),
    );
    const revoked = grants
      .map((g) => /^REVOKE SELECT\(raw\) ON `[^.]+`\.(\w+) FROM /.exec(g)?.[1])
      .filter((t) => t !== undefined)
      .sort();
    expect(revoked).toEqual(withRaw);
  });

  it("is not needed by any dashboard: no query reads a raw column or every column, but a panel that says it needs the grant", () => {
    for (const { dashboard } of loadDashboards()) {
      const queries = [
        ...dashboard.panels.flatMap((p) =>
          p.targets.map((t) => ({
            sql: t.rawSql,
            // Session detail's raw record: docs/dashboards.md says how to grant it.
            grant: (p.description ?? "").includes(
              "needs SELECT on sessions.raw",
            ),
          })),
        ),
        ...queryVariables(dashboard).map((v) => ({
          sql: v.query,
          grant: false,
        })),
      ];
      for (const { sql, grant } of queries) {
        if (!grant) expect(sql).not.toMatch(/\braw\b/);
        expect(sql).not.toMatch(/SELECT\s+\*|\.\*/);
      }
    }
  });
});
