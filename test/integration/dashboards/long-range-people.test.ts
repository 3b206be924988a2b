// The sensitive-data, native-user and AI panels over rolled-up days and raw days: they read the
// whole rolled-up days of their range from the daily rollups of migration 0046 and every other
// day from sessions (or sessions_enriched), and answer what the queries they replaced answer
// from the raw rows alone (test/helpers/replaced-panels.ts). The fixture is the long history
// (sessions made through native users, some days not rolled up, today) with brand members'
// sessions on LLM and MCP resources, identity links that name a person from a day on, and an
// inventory whose columns carry data labels.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { DAY, HOUR, storeLongHistory } from "../../helpers/long-history.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import {
  REPLACED_NATIVE_VARIABLES,
  REPLACED_PANELS,
} from "../../helpers/replaced-panels.js";
import {
  loadDashboards,
  queryVariables,
  type Dashboard,
} from "../../helpers/dashboards.js";
import {
  queryInterval,
  renderQuery,
  type TimeRange,
} from "../../helpers/grafana-sql.js";
import {
  resolveVariables,
  run,
  useDatabase,
  type Result,
} from "../../helpers/panels.js";

const NOW = Date.now();
const TODAY = Math.floor(NOW / DAY) * DAY;
const UIDS = [
  "sessionhouse-sensitive-inventory",
  "sessionhouse-native-users",
  "sessionhouse-ai-llm-activity",
];
const ROLLUPS =
  /\b(resource_people_rollups_daily|native_user_rollups_daily|technology_pair_rollups_daily)\b/;

let w: Warehouse;

const at = (ms: number) => `fromUnixTimestamp64Milli(${ms}, 'UTC')`;

/** Brand members' sessions (a user, some an end user) on LLM, MCP and labelled resources. */
async function storeBrandSessions(): Promise<void> {
  await w.client.command({
    query: `INSERT INTO sessions (id, start_time, end_time, duration_ms, session_status, user_type,
        user_username, user_id, user_email, end_user_id, resource_id, resource_name,
        resource_technology, native_username, fetched_at, version)
      SELECT concat('brand_', toString(number)) AS id,
        ${at(TODAY - 60 * DAY)} + toIntervalMinute(number * 53) AS start,
        start + toIntervalMinute(3), 180000, 'completed', if(number % 4 = 3, 'machine', 'human'),
        concat('u', toString(number % 4)), concat('usr_', toString(number % 4)),
        concat('u', toString(number % 4), '@acme.example'),
        if(number % 3 = 0, concat('usr_end_', toString(number % 2)), ''),
        concat('res-', toString(number % 3)), concat('ai-', toString(number % 3)),
        arrayElement(['llm', 'mcp', 'postgres'], 1 + number % 3), '',
        start + toIntervalMinute(1), 2
      FROM numbers(1650)
      WHERE start < ${at(NOW - HOUR)}`,
  });
}

/** Identity links: `analyst` names a user from 20 days ago, `app` a group from 40 days ago. */
async function storeLinks(): Promise<void> {
  await w.client.command({
    query: `INSERT INTO native_user_identity_links_history (id, valid_from, resource_id,
        native_username, identity_type, identity_id, user_email, user_full_name, group_name,
        is_deleted, version)
      VALUES ('lnk_1', ${at(TODAY - 20 * DAY)}, '', 'analyst', 'user', 'usr_zoe',
              'zoe@acme.example', 'Zoe', '', 0, 1),
             ('lnk_2', ${at(TODAY - 40 * DAY)}, '', 'app', 'group', 'grp_ops', '', '', 'ops', 0, 1)`,
  });
  // The environment of the MCP resource, as the resource_environments view reads it.
  await w.client.command({
    query: `INSERT INTO agg_histogram (job, bucket_time, interval_s, level, key1, key2, count, window_start, fetched_at)
      SELECT 'resource_environments', toDateTime(${(TODAY - DAY) / 1000}, 'UTC') AS t, 3600, 2, 'prod', 'ai-1', 1, t, t`,
  });
  await w.client.command({
    query: `INSERT INTO inventory_columns (id, kind, resource_id, resource_name, path, data_labels)
      VALUES ('col_1', 'column', '', 'resource-0', 'db.t.email', ['pii']),
             ('col_2', 'column', 'res-0', 'ai-0', 'db.t.card', ['pci', 'pii']),
             ('col_3', 'column', 'res-1', 'ai-1', 'db.t.note', ['secret']),
             ('col_4', 'column', 'res-2', 'ai-2', 'db.t.id', [])`,
  });
}

beforeAll(async () => {
  const config = await testConfig();
  w = await migratedWarehouse(config);
  await useDatabase(w);
  await storeLongHistory(w, NOW);
  await storeBrandSessions();
  await storeLinks();
  await rollUp(
    { config, warehouse: w, logger: createLogger({ level: "silent" }) },
    NOW,
  );
}, 120_000);

afterAll(async () => {
  await w?.close();
});

const dashboards = new Map(
  loadDashboards()
    .filter((d) => UIDS.includes(d.dashboard.uid))
    .map((d) => [d.dashboard.uid, d.dashboard]),
);

function dashboardOf(uid: string): Dashboard {
  const d = dashboards.get(uid);
  if (!d) throw new Error(`no dashboard ${uid}`);
  return d;
}

const RANGES: [string, TimeRange][] = [
  ["30 d", { fromMs: NOW - 30 * DAY, toMs: NOW }],
  ["long", { fromMs: TODAY - 50 * DAY + 5 * HOUR, toMs: NOW }],
  [
    "within a day",
    { fromMs: TODAY - 10 * DAY + 2 * HOUR, toMs: TODAY - 10 * DAY + 9 * HOUR },
  ],
];

/** `sql` run with the dashboard's variables resolved over `range` with `chosen` picked. */
async function rowsOf(
  d: Dashboard,
  sql: string,
  range: TimeRange,
  chosen: ReadonlyMap<string, string[]>,
  interval?: string,
): Promise<Result> {
  const { variables } = await resolveVariables(w, d, { range, chosen });
  return run(
    w,
    renderQuery(sql, {
      range,
      intervalMs: queryInterval(range, interval),
      variables,
    }),
  );
}

const rewritten = REPLACED_PANELS.filter(
  (r) =>
    UIDS.includes(r.uid) &&
    dashboardOf(r.uid)
      .panels.find((p) => p.title === r.title)
      ?.targets.some((t) => ROLLUPS.test(t.rawSql)),
);

describe("panels over the rollups of migration 0046", () => {
  it("cover every panel that reads them", () => {
    const reading = [...dashboards.values()].flatMap((d) =>
      d.panels
        .filter((p) => p.targets.some((t) => ROLLUPS.test(t.rawSql)))
        .map((p) => p.title),
    );
    expect(rewritten.map((r) => r.title).sort()).toEqual(reading.sort());
    expect(reading).toHaveLength(8);
  });

  it.each(rewritten.map((r) => [r.title, r] as const))(
    "%s: the rows of the query it replaced, at All and with one option picked",
    async (_title, r) => {
      const d = dashboardOf(r.uid);
      const panel = d.panels.find((p) => p.title === r.title);
      const now = panel?.targets[0]?.rawSql;
      if (!panel || now === undefined) throw new Error(`no ${r.title}`);
      let answered = 0;
      for (const [name, range] of RANGES) {
        const { variables } = await resolveVariables(w, d, { range });
        const option = variables.find((v) => v.name === r.picks)?.options[0];
        expect(option, `${name}: an option of ${r.picks}`).toBeDefined();
        const user = variables.find((v) => v.name === "user")?.options[0];
        for (const chosen of [
          new Map<string, string[]>(),
          new Map([[r.picks, [option ?? ""]]]),
          // The AI dashboard's panels with one user too, whatever their pick.
          ...(r.uid === "sessionhouse-ai-llm-activity" && user !== undefined
            ? [new Map([["user", [user]]])]
            : []),
        ]) {
          const what = `${name} ${JSON.stringify([...chosen])}`;
          const want = await rowsOf(d, r.sql, range, chosen, panel.interval);
          answered += want.rows.length > 0 ? 1 : 0;
          const got = await rowsOf(d, now, range, chosen, panel.interval);
          expect(got.columns, what).toEqual(want.columns);
          expect(got.rows, what).toEqual(want.rows);
        }
      }
      expect(answered).toBeGreaterThanOrEqual(4);
    },
  );

  it.each(REPLACED_NATIVE_VARIABLES.map((r) => [r.name, r] as const))(
    "variable %s: the options of the query it replaced",
    async (_name, r) => {
      const d = dashboardOf(r.uid);
      const v = queryVariables(d).find((x) => x.name === r.name);
      if (!v) throw new Error(`no variable ${r.name}`);
      expect(v.query).toMatch(ROLLUPS);
      for (const [name, range] of RANGES) {
        const want = await rowsOf(d, r.sql, range, new Map());
        expect(want.rows.length, name).toBeGreaterThan(0);
        expect((await rowsOf(d, v.query, range, new Map())).rows, name).toEqual(
          want.rows,
        );
      }
    },
  );

  // A rollup row no session backs shows in the panel; superseded with no sessions, it goes.
  it.each([
    [
      "sessionhouse-sensitive-inventory",
      "Sessions on resources holding labelled data",
      `INSERT INTO resource_people_rollups_daily (day, resource_id, resource_name, sessions, computed_at)
        VALUES ({day}, 'res-0', 'zz-labelled', {n}, now64(3) + toIntervalSecond({later}))`,
      ["zz-labelled", ["pci", "pii"], 100000],
    ],
    [
      "sessionhouse-native-users",
      "Person behind each native user",
      `INSERT INTO native_user_rollups_daily (day, resource_name, native_username, person_via, sessions, computed_at)
        VALUES ({day}, 'zz-db', 'zz-native', 'none', {n}, now64(3) + toIntervalSecond({later}))`,
      ["zz-db", "zz-native", "none", "(none)", "", 100000],
    ],
    [
      "sessionhouse-ai-llm-activity",
      "Who uses which LLM and MCP resources",
      `INSERT INTO technology_pair_rollups_daily (day, resource_technology, user_key, resource_name, sessions, computed_at)
        VALUES ({day}, 'mcp', 'zz-user', 'zz-mcp', {n}, now64(3) + toIntervalSecond({later}))`,
      ["zz-user", "", "zz-mcp", "mcp", 100000],
    ],
  ] as const)(
    "%s / %s counts a rolled-up day from its rollup",
    async (uid, title, insert, head) => {
      const d = dashboardOf(uid);
      const now = d.panels.find((p) => p.title === title)?.targets[0]?.rawSql;
      if (now === undefined) throw new Error(`no ${title}`);
      const day = `'${new Date(TODAY - 10 * DAY).toISOString().slice(0, 10)}'`;
      const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
      const first = async () =>
        (await rowsOf(d, now, range, new Map())).rows[0]?.slice(0, head.length);
      const row = (n: number, later: number) =>
        w.client.command({
          query: insert
            .replace("{day}", day)
            .replace("{n}", String(n))
            .replace("{later}", String(later)),
        });
      const was = await first();
      await row(100_000, 0);
      expect(await first()).toEqual(head);
      await row(0, 1);
      expect(await first()).toEqual(was);
    },
  );
});

// Over 31 days or less the time series keep their sub-day buckets, so they read sessions (or
// sessions_enriched): every day not rolled up, and of the rolled-up days only those on which
// their daily rollup holds a session of the filters. A session stored for a rolled-up day after
// it was computed shows once the rollup job computes that day again.
describe("time series over 31 days or less", () => {
  it.each([
    [
      "sessionhouse-native-users",
      "Native-user sessions by how the person is known",
      "native_resource",
      "zz-late-db",
      `'', '', 'zz-late-db', 'postgres', 'zz-late-native'`,
    ],
    [
      "sessionhouse-ai-llm-activity",
      "LLM and MCP sessions over time",
      "user",
      "zz-late-user",
      `'zz-late-user', 'usr_zz', 'zz-late-llm', 'llm', ''`,
    ],
  ] as const)(
    "%s / %s reads from sessions only the rolled-up days its rollup finds sessions on",
    async (uid, title, variable, value, columns) => {
      const d = dashboardOf(uid);
      const panel = d.panels.find((p) => p.title === title);
      const now = panel?.targets[0]?.rawSql;
      if (!panel || now === undefined) throw new Error(`no ${title}`);
      const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
      const chosen = new Map([[variable, [value]]]);
      const sessions = async () =>
        (await rowsOf(d, now, range, chosen, panel.interval)).rows.reduce(
          (n, r) => n + Number(r[2]),
          0,
        );
      expect(await sessions()).toBe(0);
      // A session of a rolled-up day, fetched after the day was computed (keys no other case
      // writes to the rollups), and the rollup pass after it: both at a clock past every earlier
      // pass, as in service, so the day's newest fetch differs from the one its rollup recorded.
      const fetched = Date.now();
      await w.client.command({
        query: `INSERT INTO sessions (id, start_time, session_status, user_username, user_id,
            resource_name, resource_technology, native_username, fetched_at, version)
          SELECT 'zz_late_${value}', ${at(TODAY - 10 * DAY + 12 * HOUR)}, 'completed', ${columns},
            ${at(fetched)}, 3`,
      });
      expect(await sessions()).toBe(0);
      await rollUp(
        {
          config: await testConfig(),
          warehouse: w,
          logger: createLogger({ level: "silent" }),
        },
        fetched + 1,
      );
      expect(await sessions()).toBe(1);
    },
  );
});
