import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/index.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const base = {
  SESSIONHOUSE_API_URL: "https://cp.example.com",
  SESSIONHOUSE_API_KEY: "k-123456",
};

function problems(
  env: Record<string, string>,
  configFile?: string,
): readonly string[] {
  try {
    loadConfig({ env, configFile });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

/** Writes `lines` as the file `name` in a new directory; returns its path. */
function writeConfigFile(name: string, lines: readonly string[]): string {
  const file = join(mkdtempSync(join(testTmpDir(), "cfg-")), name);
  writeFileSync(file, lines.join("\n"));
  return file;
}

describe("configuration", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig({ env: base });
    expect(c.clickhouse.database).toBe("sessionhouse");
    expect(c.clickhouse.dataDir).toBe("./data");
    expect(c.clickhouse.url).toBeUndefined();
    expect(c.api.timestampFormat).toBe("unix");
    expect(c.sessions.pageSize).toBe(10_000);
    expect(c.clickhouse.retentionDays).toBe(0);
    expect(c.aggregations.jobs.length).toBeGreaterThanOrEqual(4);
  });

  it("reads the service lease's TTL and renewal, and refuses a renewal longer than half the TTL", () => {
    const defaults = loadConfig({ env: base }).service;
    expect([defaults.leaseTtlMs, defaults.leaseRenewMs]).toEqual([
      30_000, 10_000,
    ]);
    const short = loadConfig({
      env: {
        ...base,
        SESSIONHOUSE_LEASE_TTL: "3s",
        SESSIONHOUSE_LEASE_RENEW: "500",
      },
    }).service;
    expect([short.leaseTtlMs, short.leaseRenewMs]).toEqual([3000, 500]);
    expect(
      problems({
        ...base,
        SESSIONHOUSE_LEASE_TTL: "10s",
        SESSIONHOUSE_LEASE_RENEW: "6s",
      }),
    ).toEqual([
      expect.stringMatching(
        /SESSIONHOUSE_LEASE_RENEW must be at most half of SESSIONHOUSE_LEASE_TTL/,
      ),
    ]);
    expect(problems({ ...base, SESSIONHOUSE_LEASE_TTL: "500" })).toEqual([
      expect.stringMatching(/SESSIONHOUSE_LEASE_TTL must be between 1s and 1h/),
    ]);
  });

  it("compresses requests to a server only when told, or toward ClickHouse Cloud", () => {
    expect(
      loadConfig({ env: base }).clickhouse.compressRequests,
    ).toBeUndefined();
    expect(
      loadConfig({ env: { ...base, CLICKHOUSE_COMPRESS_REQUESTS: "false" } })
        .clickhouse.compressRequests,
    ).toBe(false);
    expect(problems({ ...base, CLICKHOUSE_COMPRESS_REQUESTS: "gzip" })).toEqual(
      [
        expect.stringMatching(
          /CLICKHOUSE_COMPRESS_REQUESTS must be true or false/,
        ),
      ],
    );
  });

  it("is frozen", () => {
    const c = loadConfig({ env: base });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.api)).toBe(true);
  });

  it("reads units in durations", () => {
    const c = loadConfig({
      env: {
        ...base,
        SESSIONHOUSE_LOOKBACK: "15m",
        SESSIONHOUSE_REQUEST_TIMEOUT: "90s",
      },
    });
    expect(c.sessions.lookbackMs).toBe(900_000);
    expect(c.api.requestTimeoutMs).toBe(90_000);
  });

  it("lists every problem at once, naming the variable", () => {
    const p = problems({
      SESSIONHOUSE_API_URL: "not a url",
      SESSIONHOUSE_PAGE_SIZE: "200000",
      SESSIONHOUSE_TIMESTAMP_FORMAT: "epoch",
      SESSIONHOUSE_LOOKBACK: "soon",
      CLICKHOUSE_DATABASE: "bad-name;drop",
    });
    const text = p.join("\n");
    expect(p.length).toBeGreaterThanOrEqual(6);
    expect(text).toMatch(/SESSIONHOUSE_API_URL.*http/);
    expect(text).toMatch(/SESSIONHOUSE_API_KEY/);
    expect(text).toMatch(/SESSIONHOUSE_PAGE_SIZE.*100000/);
    expect(text).toMatch(/SESSIONHOUSE_TIMESTAMP_FORMAT/);
    expect(text).toMatch(/SESSIONHOUSE_LOOKBACK/);
    expect(text).toMatch(/CLICKHOUSE_DATABASE/);
  });

  it("names a misspelt variable beside the setting it left missing", () => {
    const p = problems({
      SESSIONHOUSE_API_URL: "https://api.example.com",
      SESSIONHOUSE_API_KYE: "a-key-long-enough-0000",
    });
    expect(p).toContain(
      "SESSIONHOUSE_API_KYE is set, and no setting reads it (did you mean SESSIONHOUSE_API_KEY?)",
    );
    expect(p.join("\n")).toMatch(/SESSIONHOUSE_API_KEY.*required/i);
  });

  it("reads the API key from a file, and refuses both forms at once", () => {
    const dir = mkdtempSync(join(testTmpDir(), "cfg-"));
    const file = join(dir, "key");
    writeFileSync(file, "from-file-key\n");
    const c = loadConfig({
      env: {
        SESSIONHOUSE_API_URL: base.SESSIONHOUSE_API_URL,
        SESSIONHOUSE_API_KEY_FILE: file,
      },
    });
    expect(c.api.apiKey).toBe("from-file-key");
    expect(
      problems({ ...base, SESSIONHOUSE_API_KEY_FILE: file }).join(),
    ).toMatch(/not both/);
    expect(
      problems({
        SESSIONHOUSE_API_URL: base.SESSIONHOUSE_API_URL,
        SESSIONHOUSE_API_KEY_FILE: join(dir, "missing"),
      }).join(),
    ).toMatch(/SESSIONHOUSE_API_KEY_FILE .* cannot be read/);
  });

  it("merges a YAML config file under the environment, with custom aggregation jobs", () => {
    const dir = mkdtempSync(join(testTmpDir(), "cfg-"));
    const file = join(dir, "sessionhouse.yaml");
    writeFileSync(
      file,
      [
        "api:",
        "  url: https://from-file.example.com",
        "  extraHeaders: { X-Api-Version: '2' }",
        "sessions:",
        "  pageSize: 50000",
        "aggregations:",
        "  jobs:",
        "    - name: prod_by_user",
        "      query: 'resource.environment:prod'",
        "      groupBy: [user.email]",
        "      interval: 1h",
      ].join("\n"),
    );
    const c = loadConfig({
      env: {
        SESSIONHOUSE_API_KEY: "k-123456",
        SESSIONHOUSE_PAGE_SIZE: "70000",
      },
      configFile: file,
    });
    expect(c.api.url).toBe("https://from-file.example.com");
    expect(c.api.extraHeaders).toEqual({ "X-Api-Version": "2" });
    expect(c.sessions.pageSize).toBe(70_000);
    expect(c.aggregations.jobs.map((j) => j.name)).toEqual(["prod_by_user"]);
    expect(c.aggregations.jobs[0]?.windowMs).toBe(3_600_000);
  });

  it("refuses a job with four group-by fields or a duplicate name", () => {
    const dir = mkdtempSync(join(testTmpDir(), "cfg-"));
    const file = join(dir, "c.json");
    writeFileSync(
      file,
      JSON.stringify({
        aggregations: {
          jobs: [
            { name: "a", groupBy: ["a", "b", "c", "d"] },
            { name: "b" },
            { name: "b" },
          ],
        },
      }),
    );
    const text = problems(base, file).join("\n");
    expect(text).toMatch(/at most 3 group-by fields/);
    expect(problems(base, file.replace("c.json", "nope.json")).join()).toMatch(
      /cannot be read/,
    );
  });

  it("refuses a key of the config file it does not know, naming the key, the file and the nearest known key", () => {
    const file = writeConfigFile("sessionhouse.yaml", [
      "api:",
      "  extraHeaders: { X-Tenant: acme }", // any header name is a key of its own
      "sessions:",
      "  pageSise: 5000", // misspelt
      "  maxPagesPerWindow: 10",
      "api_timeouts: {}", // no such section
      "clickhouse:",
      "  hotDays: 30", // a key of retention.tables.sessions
      "aggregations:",
      "  jobs:",
      "    - name: by_user",
      "      groupby: [user.email]", // misspelt inside a list
    ]);
    let error: unknown;
    try {
      loadConfig({ env: base, configFile: file });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const e = error as ConfigError;
    expect(e.code).toBe("CONFIG_INVALID");
    expect(e.problems).toEqual([
      `config file ${file}: unknown key sessions.pageSise (did you mean sessions.pageSize?)`,
      `config file ${file}: unknown key api_timeouts (did you mean api?)`,
      `config file ${file}: unknown key clickhouse.hotDays (did you mean retention.tables.sessions.hotDays?)`,
      `config file ${file}: unknown key aggregations.jobs.0.groupby (did you mean aggregations.jobs.0.groupBy?)`,
    ]);
    expect(e.hint).toMatch(/correct or remove each unknown key/);
    // A file of known keys loads as before.
    expect(
      loadConfig({
        env: base,
        configFile: writeConfigFile("ok.yaml", [
          "sessions:",
          "  pageSize: 5000",
        ]),
      }).sessions.pageSize,
    ).toBe(5000);
  });

  it("names a setting given in the config file by its path in the file, one from the environment by its variable", () => {
    const file = writeConfigFile("sessionhouse.yaml", [
      "api:",
      "  url: not a url",
      "sessions:",
      "  pageSize: lots",
      "  windowMs: soon",
      "service:",
      "  leaseTtlMs: 10s",
      "  leaseRenewMs: 6s",
      "clickhouse:",
      "  replicated: true",
    ]);
    const env = { SESSIONHOUSE_API_KEY: "k-123456" };
    const fromFile = problems(env, file);
    expect(fromFile).toEqual(
      expect.arrayContaining([
        `api.url in ${file}: must be an http:// or https:// URL`,
        `sessions.pageSize in ${file}: must be a number`,
        `sessions.windowMs in ${file}: must be a duration such as 30s, 15m, 1h, 7d or milliseconds, got "soon"`,
        `service.leaseRenewMs in ${file}: must be at most half of service.leaseTtlMs, so that a renewal that fails once is retried before the lease expires`,
      ]),
    );
    expect(fromFile.join("\n")).not.toMatch(
      /SESSIONHOUSE_(API_URL|PAGE_SIZE|WINDOW|LEASE)/,
    );
    // The environment wins over the file, and is named by its variable.
    const both = problems(
      { ...env, SESSIONHOUSE_PAGE_SIZE: "many", SESSIONHOUSE_WINDOW: "1h" },
      file,
    );
    expect(both).toContain("SESSIONHOUSE_PAGE_SIZE must be a number");
    expect(both.join("\n")).not.toMatch(/sessions\.(pageSize|windowMs)/);
    // A rule across settings names each as it was given.
    const cluster = writeConfigFile("cluster.yaml", [
      "clickhouse:",
      "  replicated: true",
    ]);
    expect(problems(base, cluster)).toEqual([
      `clickhouse.replicated in ${cluster} needs CLICKHOUSE_CLUSTER: the replicated tables are created ON CLUSTER`,
    ]);
    expect(problems({ ...base, CLICKHOUSE_REPLICATED: "true" })).toEqual([
      "CLICKHOUSE_REPLICATED needs CLICKHOUSE_CLUSTER: the replicated tables are created ON CLUSTER",
    ]);
  });

  it("takes the sessions' retention where the other tables' is, as the same setting", () => {
    const file = writeConfigFile("sessions-retention.yaml", [
      "retention:",
      "  tables:",
      "    sessions:",
      "      retentionDays: 30",
      "    agg_histogram:",
      "      retentionDays: 90",
    ]);
    const config = loadConfig({ env: base, configFile: file });
    expect(config.clickhouse.retentionDays).toBe(30);
    expect(config.retention.tables.agg_histogram.retentionDays).toBe(90);
    // The environment wins over the file, as for every setting.
    expect(
      loadConfig({
        env: { ...base, SESSIONHOUSE_RETENTION_DAYS: "60" },
        configFile: file,
      }).clickhouse.retentionDays,
    ).toBe(60);
    const both = writeConfigFile("sessions-retention-twice.yaml", [
      "clickhouse:",
      "  retentionDays: 45",
      "retention:",
      "  tables:",
      "    sessions:",
      "      retentionDays: 30",
    ]);
    expect(problems(base, both)).toEqual([
      `retention.tables.sessions.retentionDays in ${both} (30) and clickhouse.retentionDays in ${both} (45) both set the sessions' retention: give one`,
    ]);
  });

  it("offers the table names for an unknown key under retention.tables, nearest first", () => {
    const file = writeConfigFile("sessionhouse.yaml", [
      "retention:",
      "  tables:",
      "    nosuchtable:",
      "      hotDays: 7",
      "    agg_histogrm:",
      "      retentionDays: 30",
    ]);
    expect(problems(base, file)).toEqual([
      `config file ${file}: unknown key retention.tables.nosuchtable (the names under retention.tables, nearest first: sessions, agg_histogram, agg_top_values)`,
      `config file ${file}: unknown key retention.tables.agg_histogrm (the names under retention.tables, nearest first: agg_histogram, sessions, agg_top_values)`,
    ]);
  });

  it("reads the reconciliation and open-session settings, with their defaults", () => {
    const d = loadConfig({ env: base }).sessions;
    expect(d.reconcileSchedule).toBe("17 * * * *");
    expect(d.reconcileDays).toBe(3);
    expect(d.vanishAfterMisses).toBe(3);
    expect(d.unknownStatusPollMs).toBe(7 * 86_400_000);
    const c = loadConfig({
      env: {
        ...base,
        SESSIONHOUSE_RECONCILE_SCHEDULE: "5 */2 * * *",
        SESSIONHOUSE_RECONCILE_DAYS: "0",
        SESSIONHOUSE_VANISH_AFTER_MISSES: "5",
        SESSIONHOUSE_UNKNOWN_STATUS_POLL: "36h",
      },
    }).sessions;
    expect(c.reconcileSchedule).toBe("5 */2 * * *");
    expect(c.reconcileDays).toBe(0);
    expect(c.vanishAfterMisses).toBe(5);
    expect(c.unknownStatusPollMs).toBe(36 * 3_600_000);
    const text = problems({
      ...base,
      SESSIONHOUSE_RECONCILE_DAYS: "-1",
      SESSIONHOUSE_VANISH_AFTER_MISSES: "0",
      SESSIONHOUSE_UNKNOWN_STATUS_POLL: "a week",
    }).join("\n");
    expect(text).toMatch(/SESSIONHOUSE_RECONCILE_DAYS must be at least 0/);
    expect(text).toMatch(/SESSIONHOUSE_VANISH_AFTER_MISSES must be at least 1/);
    expect(text).toMatch(/SESSIONHOUSE_UNKNOWN_STATUS_POLL must be a duration/);
  });

  it("never puts the secrets into its errors", () => {
    const p = problems({
      ...base,
      CLICKHOUSE_PASSWORD: "hunter2-pass",
      SESSIONHOUSE_PAGE_SIZE: "x",
    });
    expect(p.join()).not.toContain("k-123456");
    expect(p.join()).not.toContain("hunter2-pass");
  });
});
