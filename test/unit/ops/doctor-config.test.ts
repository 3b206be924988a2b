// The configuration checks of `sessionhouse doctor`: settings that load, yet defeat one another
// or never act. Each warns naming the setting and what to change; the defaults warn nothing.
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/index.js";
import type { Finding } from "../../../src/ops/doctor/check.js";
import { CONFIG_CHECKS } from "../../../src/ops/doctor/config-checks.js";

const NOW = Date.UTC(2026, 10, 26, 7, 0, 0);
const base = {
  SESSIONHOUSE_API_URL: "https://cp.example.com",
  SESSIONHOUSE_API_KEY: "k-0123456789abcdef",
};

async function check(
  name: string,
  env: Record<string, string> = {},
  overrides: Record<string, unknown> = {},
): Promise<Finding> {
  const all = { ...base, ...env };
  const config = loadConfig({ env: all, overrides });
  const spec = CONFIG_CHECKS.find((s) => s.name === name);
  if (!spec) throw new Error(`no check ${name}`);
  return spec.run({ config, nowMs: NOW, env: all });
}

describe("doctor: configuration checks", () => {
  it("the defaults warn nothing", async () => {
    for (const spec of CONFIG_CHECKS)
      expect(await check(spec.name), spec.name).toMatchObject({
        status: "ok",
      });
  });

  it("a SESSIONHOUSE_* variable nothing reads is named with the nearest one read; other projects' names are not", async () => {
    const f = await check("environment", {
      SESSIONHOUSE_RETENTION_DAY: "30",
      SESSIONHOUSE_CLICKHOUSE_HOST: "clickhouse",
      CLICKHOUSE_HOST: "elsewhere",
    });
    expect(f).toMatchObject({
      status: "warn",
      found:
        "SESSIONHOUSE_RETENTION_DAY is set, and no setting reads it (did you mean SESSIONHOUSE_RETENTION_DAYS?)",
      fix: "rename SESSIONHOUSE_RETENTION_DAY to SESSIONHOUSE_RETENTION_DAYS, or unset it",
    });
  });

  it("a schedule that does not fire within a year (29 February, from November 2026) is named", async () => {
    const f = await check("schedules", {
      SESSIONHOUSE_ROLLUP_SCHEDULE: "0 0 29 2 *",
    });
    expect(f.status).toBe("warn");
    expect(f.found).toContain(
      'schedule of job rollups "0 0 29 2 *" does not fire within a year (next: 2028-02-29T00:00:00.000Z)',
    );
    expect(f.fix).toContain("give schedule of job rollups a schedule");
  });

  it("a schedule of a scheduled report is checked too", async () => {
    const f = await check(
      "schedules",
      {},
      {
        "reports.schedules": [
          {
            kind: "access-review",
            cron: "0 6 29 2 *",
            range: "previous-month",
            out: "reports",
          },
        ],
      },
    );
    expect(f.status).toBe("warn");
    expect(f.found).toContain("report.access-review");
  });

  it("rollups kept shorter than the sessions they summarise", async () => {
    const kept = await check("retention", {
      SESSIONHOUSE_RETENTION_DAYS: "400",
      SESSIONHOUSE_ROLLUP_RETENTION_DAYS: "90",
    });
    expect(kept.status).toBe("warn");
    expect(kept.found).toContain(
      "the daily rollups are kept 90 days, shorter than the sessions (400 days)",
    );
    expect(kept.fix).toContain("SESSIONHOUSE_ROLLUP_RETENTION_DAYS");
    // Sessions kept forever: any rollup retention is shorter.
    const forever = await check("retention", {
      SESSIONHOUSE_ROLLUP_RETENTION_DAYS: "90",
    });
    expect(forever.found).toContain("shorter than the sessions (forever)");
    // Rollups outliving the sessions is what they are for.
    expect(
      await check("retention", {
        SESSIONHOUSE_RETENTION_DAYS: "400",
        SESSIONHOUSE_ROLLUP_RETENTION_DAYS: "3650",
      }),
    ).toMatchObject({ status: "ok" });
  });

  it("a retention that deletes a month's first days before the month can be archived, with no archive directory, warns; with one it is ok", async () => {
    const thin = await check("retention", {
      SESSIONHOUSE_RETENTION_DAYS: "27",
    });
    expect(thin.status).toBe("warn");
    expect(thin.found).toContain(
      "sessions rows are deleted after 27 days (SESSIONHOUSE_RETENTION_DAYS), whether archived or not, and no archive directory is set",
    );
    expect(thin.fix).toContain("set SESSIONHOUSE_ARCHIVE_DIR (archive.dir)");
    const histogram = await check(
      "retention",
      {},
      { "retention.tables.agg_histogram.retentionDays": 20 },
    );
    expect(histogram.found).toContain(
      "agg_histogram rows are deleted after 20 days",
    );
    const archived = await check("retention", {
      SESSIONHOUSE_RETENTION_DAYS: "27",
      SESSIONHOUSE_ARCHIVE_DIR: "/srv/archive",
    });
    expect(archived).toMatchObject({
      status: "ok",
      found: expect.stringContaining(
        "deleted only once archived in /srv/archive",
      ) as unknown,
    });
  });

  it.each<{
    what: string;
    check: string;
    env: Record<string, string>;
    says: string;
  }>([
    {
      what: "sessions deleted before their day settles and is rolled up",
      check: "retention",
      env: { SESSIONHOUSE_RETENTION_DAYS: "5" },
      says: "sessions are deleted after 5 days, before a day with open sessions is rolled up (SESSIONHOUSE_ROLLUP_SETTLE_AFTER 7 days)",
    },
    {
      what: "a day rolled up while its sessions of unknown status are still re-read",
      check: "retention",
      env: { SESSIONHOUSE_ROLLUP_SETTLE_AFTER: "2d" },
      says: "set SESSIONHOUSE_ROLLUP_SETTLE_AFTER to at least SESSIONHOUSE_UNKNOWN_STATUS_POLL",
    },
    {
      what: "rows deleted before they would move to the cold volume",
      check: "retention",
      env: { SESSIONHOUSE_RETENTION_DAYS: "30", SESSIONHOUSE_HOT_DAYS: "30" },
      says: "sessions: rows are deleted after 30 days, before they move to the cold volume after 30 days",
    },
    {
      what: "more windows at once than API connections",
      check: "concurrency",
      env: {
        SESSIONHOUSE_WINDOW_CONCURRENCY: "8",
        SESSIONHOUSE_API_CONNECTIONS: "4",
      },
      says: "SESSIONHOUSE_WINDOW_CONCURRENCY is 8, more than the 4 API connections",
    },
  ])("$what", async ({ check: name, env, says }) => {
    const f = await check(name, env);
    expect(f.status).toBe("warn");
    expect(`${f.found} — ${f.fix ?? ""}`).toContain(says);
  });

  it("a short secret is named by its setting and length, never by a character of it", async () => {
    const f = await check("secrets", { SESSIONHOUSE_API_KEY: "abc12345" });
    expect(f.status).toBe("warn");
    expect(f.found).toContain(
      "SESSIONHOUSE_API_KEY (api.apiKey) is 8 characters long",
    );
    expect(`${f.found} ${f.fix ?? ""}`).not.toContain("abc12345");
    expect(`${f.found} ${f.fix ?? ""}`).not.toContain("abc");
  });

  it("an API key sent over http:// beyond this host", async () => {
    const f = await check("api url", {
      SESSIONHOUSE_API_URL: "http://cp.example.com",
    });
    expect(f.status).toBe("warn");
    expect(f.found).toContain("the API key travels unencrypted");
    expect(
      await check("api url", { SESSIONHOUSE_API_URL: "http://127.0.0.1:8080" }),
    ).toMatchObject({ status: "ok" });
  });
});
