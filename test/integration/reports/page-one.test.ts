// Page one of a report over simulator data says what is so, and nothing that is not: a record
// that starts after the period does is told with what the checkpoints prove of that time (no
// "earlier sessions are missing" beside "known complete"); a filter that matched nobody in the
// period says so; a period partly still to come says so.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../../src/config/index.js";
import { allCheckpoints } from "../../../src/pipeline/status.js";
import { reportFrom } from "../../../src/reports/produce.js";
import { select } from "../../helpers/warehouse.js";
import {
  FROM,
  TO,
  reportFixture,
  type Fixture,
} from "../../helpers/report-fixture.js";

let f: Fixture;
let seq = 0;

beforeAll(async () => {
  f = await reportFixture();
}, 120_000);
afterAll(async () => {
  await f?.w.close();
  await f?.sim.close();
});

const plain = (ms: number) =>
  new Date(ms).toISOString().slice(0, 19).replace("T", " ");

function config(extra: Record<string, unknown> = {}): Config {
  return loadConfig({
    env: {
      SESSIONHOUSE_API_URL: f.sim.url,
      SESSIONHOUSE_API_KEY: "k",
      SESSIONHOUSE_DATA_DIR: f.config.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: f.w.database,
      ...(f.config.clickhouse.url
        ? { CLICKHOUSE_URL: f.config.clickhouse.url }
        : {}),
    },
    overrides: extra,
  });
}

interface Notice {
  level: string;
  text: string;
}

async function notices(
  o: {
    fromMs: number;
    toMs: number;
    filters?: Record<string, string>;
    nowMs?: number;
  },
  c: Config = config(),
): Promise<Notice[]> {
  const out = join(f.outDir, `page-one-${seq++}`);
  await reportFrom(f.w, c, {
    kind: "access-review",
    out,
    formats: ["json"],
    filters: {},
    ...o,
  });
  return (
    JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      notices: Notice[];
    }
  ).notices;
}

/** The sessions checkpoint's start and the oldest stored session. */
async function recordStart(): Promise<{ coversFrom: number; oldest: string }> {
  const own = (await allCheckpoints(f.w)).find((c) => c.stream === "sessions");
  const [row] = await select<{ oldest: string }>(
    f.w,
    `SELECT formatDateTime(min(start_time), '%Y-%m-%d %H:%i:%S') AS oldest FROM {db}.sessions FINAL`,
  );
  if (own?.coversFromMs === undefined || row === undefined)
    throw new Error("the fixture's sessions checkpoint has no start");
  return { coversFrom: own.coversFromMs, oldest: row.oldest };
}

describe("page one", () => {
  it("a record starting after the period, where the checkpoints prove that time synced, is not called incomplete", async () => {
    const { coversFrom, oldest } = await recordStart();
    expect(oldest > plain(coversFrom)).toBe(true);
    const said = await notices({ fromMs: coversFrom, toMs: TO });
    expect(said.map((n) => n.text).join("\n")).not.toMatch(
      /not in the record|oldest stored session started at .* after the period starts/,
    );
    expect(said).toContainEqual({
      level: "info",
      text: `No session started from ${plain(coversFrom)} to ${oldest} UTC: the checkpoints show that time was synced, and the oldest stored session started at ${oldest} UTC.`,
    });
    expect(said.filter((n) => n.level === "warning")).toEqual([]);
  });

  it("with a retention that could have reached that time, says the record no longer holds it", async () => {
    const { coversFrom, oldest } = await recordStart();
    const said = await notices(
      { fromMs: coversFrom, toMs: TO },
      config({ "clickhouse.retentionDays": 1 }),
    );
    expect(said).toContainEqual({
      level: "warning",
      text: `The oldest stored session started at ${oldest} UTC, after the period starts (${plain(coversFrom)}). The checkpoints show the sessions from ${plain(coversFrom)} to ${oldest} UTC were synced, and the retention deletes sessions older than 1 day: any session of that time was stored and has since been deleted, so the record no longer holds it.`,
    });
  });

  it("a filter that matched nobody in the period (a person seen before it) is said first", async () => {
    const cutoff = TO - 3_600_000;
    const [row] = await select<{ p: string; last: string }>(
      f.w,
      `SELECT user_key AS p, formatDateTime(max(start_time), '%Y-%m-%d %H:%i:%S') AS last
       FROM {db}.sessions FINAL GROUP BY user_key
       HAVING max(start_time) < {cutoff:DateTime64(3, 'UTC')} ORDER BY p LIMIT 1`,
      { cutoff: plain(cutoff) },
    );
    if (row === undefined) throw new Error("no person quiet in the last hour");
    const said = await notices({
      fromMs: cutoff,
      toMs: TO,
      filters: { user: row.p },
    });
    expect(said[0]).toEqual({
      level: "warning",
      text: `The filter user=${row.p} matched nobody in the period: no session of it started between the period's start and end (its last session before the period started at ${row.last} UTC). Every figure of this report is about nobody; it is not a finding that ${row.p} had no access rights.`,
    });
  });

  it("filters each seen in the period that no session matches together are said first", async () => {
    const [row] = await select<{ u: string; r: string }>(
      f.w,
      `SELECT u, r FROM (
         SELECT DISTINCT user_key AS u FROM {db}.sessions FINAL
         WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
       ) AS users CROSS JOIN (
         SELECT DISTINCT resource_name AS r FROM {db}.sessions FINAL
         WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
       ) AS resources
       WHERE (u, r) NOT IN (
         SELECT arrayJoin([user_key, person_email, person_name]), resource_name FROM {db}.sessions_enriched
         WHERE start_time >= {from:DateTime64(3, 'UTC')} AND start_time < {to:DateTime64(3, 'UTC')}
       )
       ORDER BY u, r LIMIT 1`,
      { from: plain(FROM), to: plain(TO) },
    );
    if (row === undefined) throw new Error("every person used every system");
    const said = await notices({
      fromMs: FROM,
      toMs: TO,
      filters: { user: row.u, resource: row.r },
    });
    expect(said[0]).toEqual({
      level: "warning",
      text: `The filters user=${row.u}, resource=${row.r} matched nobody in the period together: each of them matched sessions in it, and no session matches them all. Every figure of this report is about nobody; it is not a finding of no access.`,
    });
  });

  it("a period partly still to come says so", async () => {
    const now = TO - 3_600_000;
    const said = await notices({ fromMs: FROM, toMs: TO, nowMs: now });
    expect(said[0]).toEqual({
      level: "warning",
      text: `The period ends at ${plain(TO)} UTC, after this report was made (${plain(now)} UTC): the part from then to the period's end had not happened yet, and nothing of it is in this report.`,
    });
  });
});
