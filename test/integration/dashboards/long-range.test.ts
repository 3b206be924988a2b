// The sessions overview over long ranges: the panels whose measures the daily rollups hold read
// the rolled-up days from session_rollups_daily and every other day from sessions, and answer
// what the same panels answer from the raw rows alone. The fixture holds rolled-up days, days
// not rolled up yet (a session still open) and today; later the TTL deletes the oldest raw rows,
// and their days still show through the rollups. A filter the rollups cannot honour (group,
// client IP, ad hoc) reads every day from sessions.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Config } from "../../../src/config/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  applyRetention,
  retentionSettings,
} from "../../../src/warehouse/retention.js";
import {
  DAY,
  DAYS,
  HOUR,
  OPEN_DAYS,
  storeLongHistory,
} from "../../helpers/long-history.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import {
  REPLACED_CLIENT_IP_VARIABLE,
  REPLACED_PANELS,
  REPLACED_VARIABLES,
} from "../../helpers/replaced-panels.js";
import {
  GATED_PANELS,
  RANGE_GATES,
  loadDashboards,
  queryVariables,
  type Dashboard,
  type Panel,
} from "../../helpers/dashboards.js";
import {
  queryInterval,
  renderQuery,
  type AdHocFilter,
  type TemplateVariable,
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

/** Fifty days to now, starting on a partial day: rolled-up days and raw days both. */
const LONG: TimeRange = { fromMs: TODAY - 50 * DAY + 5 * HOUR, toMs: NOW };

/** Seven hours inside a rolled-up day: no whole day, every row from `sessions`. */
const INSIDE_A_DAY: TimeRange = {
  fromMs: TODAY - 10 * DAY + 2 * HOUR,
  toMs: TODAY - 10 * DAY + 9 * HOUR,
};

/** The first instant of the month `back` months before this one (UTC). */
const monthStart = (back: number) => {
  const today = new Date(TODAY);
  return Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - back, 1);
};

/**
 * Two ranges holding the previous month whole: one that starts on a partial day ten days before
 * it, one from its first day.
 */
const WHOLE_MONTH_RANGES: TimeRange[] = [
  { fromMs: monthStart(1) - 10 * DAY + 5 * HOUR, toMs: NOW },
  { fromMs: monthStart(1), toMs: NOW },
];
/** The raw retention the TTL is given halfway through. */
const RETENTION_DAYS = 45;

const dashboard = ((): Dashboard => {
  const d = loadDashboards().find(
    (x) => x.dashboard.uid === "sessionhouse-sessions-overview",
  )?.dashboard;
  if (!d) throw new Error("no sessions overview");
  return d;
})();
/** The daily rollups the sessions overview's panels read over long ranges. */
const OVERVIEW_ROLLUPS = /\b(session_rollups_daily|client_ip_rollups_daily)\b/;
const rollupPanels = dashboard.panels.filter((p) =>
  p.targets.some((t) => OVERVIEW_ROLLUPS.test(t.rawSql)),
);
/** Columns holding t-digest estimates: merged per day they may differ slightly from one digest. */
const ESTIMATES = new Set(["p50", "p95", "p50_ms", "p95_ms"]);

let config: Config;
let w: Warehouse;

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
  await useDatabase(w);
  await storeLongHistory(w, NOW);
  await rollUp(
    { config, warehouse: w, logger: createLogger({ level: "silent" }) },
    NOW,
  );
}, 120_000);

afterAll(async () => {
  await w?.close();
});

/**
 * The variables of a dashboard over a range and a choice, resolved as Grafana resolves them,
 * kept until the next write (`write`): a resolve runs every variable's query (seven on the
 * sessions overview against the one query of a panel) and most cases here ask for the same few.
 */
const resolvedCache = new Map<string, ReturnType<typeof resolveVariables>>();
function resolved(
  d: Dashboard,
  range: TimeRange,
  chosen: ReadonlyMap<string, string[]> = new Map(),
): ReturnType<typeof resolveVariables> {
  const key = JSON.stringify([d.uid, range, [...chosen]]);
  let r = resolvedCache.get(key);
  if (!r) {
    r = resolveVariables(w, d, { range, chosen });
    resolvedCache.set(key, r);
  }
  return r;
}

/** A statement that changes rows: the variables resolved before it are resolved again. */
async function write(query: string): Promise<void> {
  resolvedCache.clear();
  await w.client.command({ query });
}

/** The panel's rows over `range`, the variables resolved as Grafana resolves them. */
async function panelRows(
  panel: Panel,
  range: TimeRange,
  options: {
    chosen?: ReadonlyMap<string, string[]>;
    adHoc?: AdHocFilter[];
    /** Read every day from sessions, as if nothing were rolled up. */
    rawOnly?: boolean;
  } = {},
): Promise<Result> {
  const { variables: all } = await resolved(dashboard, range, options.chosen);
  const variables: TemplateVariable[] = all.map((v) =>
    options.rawOnly && v.name === "rolled_up_days"
      ? { ...v, current: "(SELECT toDate(0) AS day WHERE 0)" }
      : v,
  );
  const [target] = panel.targets;
  if (!target) throw new Error(`${panel.title}: no target`);
  const sql = renderQuery(target.rawSql, {
    range,
    intervalMs: queryInterval(range, panel.interval),
    variables,
    ...(options.adHoc
      ? { adHoc: { filters: options.adHoc, targetTable: "sessions" } }
      : {}),
  });
  return run(w, sql);
}

/** Rows equal, t-digest estimates within 3 %. */
function expectSameAnswer(got: Result, want: Result, what: string): void {
  expect(got.columns, what).toEqual(want.columns);
  expect(got.rows.length, what).toBe(want.rows.length);
  expect(want.rows.length, what).toBeGreaterThan(0);
  got.rows.forEach((row, i) =>
    row.forEach((value, j) => {
      const name = got.columns[j]?.name ?? "";
      const expected = want.rows[i]?.[j];
      if (ESTIMATES.has(name))
        expect(
          Math.abs(Number(value) - Number(expected)),
          `${what}: row ${i} ${name} ${String(value)} vs ${String(expected)}`,
        ).toBeLessThanOrEqual(0.03 * Math.abs(Number(expected)));
      else expect(value, `${what}: row ${i} ${name}`).toEqual(expected);
    }),
  );
}

async function countRaw(where: string): Promise<number> {
  const r = await run(w, `SELECT count() FROM sessions FINAL WHERE ${where}`);
  return Number(r.rows[0]?.[0]);
}

async function rolledUpDays(): Promise<string[]> {
  const r = await run(
    w,
    "SELECT toString(day) FROM rollup_days FINAL WHERE source = 'sessions' ORDER BY day",
  );
  return r.rows.map((x) => String(x[0]));
}

const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// The user variables read the whole rolled-up days of their range, at any length,
// from session_rollups_daily and the other days from sessions FINAL: they offer the options of
// the queries they replaced (test/helpers/replaced-panels.ts), in the same order, when those
// count each session once (they counted every stored read of a session, a number merges change).
describe("user variables over rolled-up days and raw days", () => {
  const dashboards = loadDashboards();
  const ranges: [string, TimeRange][] = [
    ["30 d", { fromMs: NOW - 30 * DAY, toMs: NOW }],
    ["long", LONG],
    ["within a day", INSIDE_A_DAY],
  ];

  it.each(REPLACED_VARIABLES.map((r) => [`${r.uid} ${r.name}`, r] as const))(
    "%s: the options of the query it replaced",
    async (_what, r) => {
      const d = dashboards.find((x) => x.dashboard.uid === r.uid)?.dashboard;
      const v = d && queryVariables(d).find((x) => x.name === r.name);
      if (!d || !v) throw new Error(`no ${r.uid} / ${r.name}`);
      const once = r.sql.replace("FROM sessions\n", "FROM sessions FINAL\n");
      expect(once).not.toBe(r.sql);
      for (const [name, range] of ranges)
        for (const chosen of [
          new Map<string, string[]>(),
          new Map([["technology", ["postgres"]]]),
        ])
          // At the variable's cap, and at a cap of 3 that cuts the options.
          for (const cap of ["1000", "3"]) {
            const { variables } = await resolved(d, range, chosen);
            const sql = (raw: string) =>
              renderQuery(raw.replaceAll("LIMIT 1000", `LIMIT ${cap}`), {
                range,
                intervalMs: queryInterval(range),
                variables,
              });
            const what = `${name} ${JSON.stringify([...chosen])} LIMIT ${cap}`;
            const want = await run(w, sql(once));
            expect(want.rows.length, what).toBeGreaterThan(0);
            expect((await run(w, sql(v.query))).rows, what).toEqual(want.rows);
          }
    },
  );

  it("count the sessions of a rolled-up day from the rollup", async () => {
    const day = dayText(TODAY - 10 * DAY);
    expect(await rolledUpDays()).toContain(day);
    // Five days around it: never a whole month, which the monthly rollups would answer for.
    const range = { fromMs: TODAY - 12 * DAY, toMs: TODAY - 7 * DAY };
    // A rollup row no session backs, then the same key superseded with no sessions.
    const rollupRow = async (sessions: number, later: number) => {
      await write(
        `INSERT INTO session_rollups_daily (day, user_key, resource_name, resource_technology,
            connector_name, session_status, sessions, computed_at)
          VALUES ('${day}', 'zz-nobody', 'zz-nowhere', 'llm', '', 'completed', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
      // The group variables read the per group × resource rollup.
      await write(
        `INSERT INTO group_resource_rollups_daily (day, user_group, resource_name,
            resource_technology, sessions, computed_at)
          VALUES ('${day}', 'zz-nobody', 'zz-nowhere', 'llm', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
      // The AI dashboard's user variable reads the per technology × person × resource rollup.
      await write(
        `INSERT INTO technology_pair_rollups_daily (day, resource_technology, user_key,
            resource_name, sessions, computed_at)
          VALUES ('${day}', 'llm', 'zz-nobody', 'zz-nowhere', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
    };
    const firstOptions = async () => {
      const first: string[] = [];
      for (const r of REPLACED_VARIABLES) {
        const d = dashboards.find((x) => x.dashboard.uid === r.uid)?.dashboard;
        if (!d) throw new Error(`no ${r.uid}`);
        const { variables } = await resolved(d, range);
        first.push(variables.find((v) => v.name === r.name)?.options[0] ?? "");
      }
      return first;
    };
    const before = await firstOptions();
    await rollupRow(1000, 0);
    expect(await firstOptions()).toEqual(
      REPLACED_VARIABLES.map(() => "zz-nobody"),
    );
    await rollupRow(0, 1);
    expect(await firstOptions()).toEqual(before);
  });
});

/**
 * A rewritten panel of dashboard `uid` and the query it replaced (test/helpers/replaced-panels.ts),
 * with `rowsOf`, which runs SQL with the dashboard's variables resolved over a range, and
 * `expectSameRows`, which holds the panel's SQL to the replaced query's rows.
 */
function rewrittenPanel(uid: string, title: string) {
  const dashboard = loadDashboards().find(
    (x) => x.dashboard.uid === uid,
  )?.dashboard;
  const panel = dashboard?.panels.find((p) => p.title === title);
  const before = REPLACED_PANELS.find((r) => r.title === title)?.sql;
  async function rowsOf(
    sql: string,
    range: TimeRange,
    chosen: ReadonlyMap<string, string[]>,
  ): Promise<Result> {
    if (!dashboard) throw new Error(`no dashboard ${uid}`);
    const { variables } = await resolved(dashboard, range, chosen);
    return run(
      w,
      renderQuery(sql, { range, intervalMs: queryInterval(range), variables }),
    );
  }
  /**
   * `now` answers over `range` with `chosen` (both queries at the row cap `cap`, when given) what
   * the replaced query answers, which is not empty unless `mayBeEmpty`; returns that answer.
   */
  async function expectSameRows(
    now: string,
    range: TimeRange,
    chosen: ReadonlyMap<string, string[]>,
    o: { cap?: string; mayBeEmpty?: boolean } = {},
  ): Promise<Result> {
    if (before === undefined) throw new Error(`no replaced query of ${title}`);
    const capped = (sql: string) =>
      o.cap === undefined
        ? sql
        : sql.replaceAll("LIMIT 1000", `LIMIT ${o.cap}`);
    const what = `${title} ${JSON.stringify([...chosen])} ${range.fromMs} to ${range.toMs}${o.cap === undefined ? "" : ` LIMIT ${o.cap}`}`;
    const want = await rowsOf(capped(before), range, chosen);
    if (o.mayBeEmpty !== true)
      expect(want.rows.length, what).toBeGreaterThan(0);
    expect((await rowsOf(capped(now), range, chosen)).rows, what).toEqual(
      want.rows,
    );
    return want;
  }
  /** The panel's SQL, which reads `table` (what it was rewritten to read). */
  function sqlReading(table: string): string {
    const sql = panel?.targets[0]?.rawSql;
    if (sql === undefined) throw new Error(`no ${title} panel`);
    expect(sql).toContain(table);
    return sql;
  }
  return { dashboard, panel, before, rowsOf, expectSameRows, sqlReading };
}

// Groups × resources reads the whole rolled-up days of its range, at any length, from
// group_resource_rollups_daily and the other days from sessions FINAL; with a user, group or
// connector filter (which the rollup does not hold) every day from sessions.
describe("Groups × resources over rolled-up days and raw days", () => {
  const { panel, before, rowsOf, expectSameRows } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Groups × resources",
  );

  it("the rows of the query it replaced", async () => {
    if (!panel?.targets[0] || before === undefined)
      throw new Error("no Groups × resources panel");
    const now = panel.targets[0].rawSql;
    expect(await rolledUpDays()).toContain(dayText(TODAY - 10 * DAY));
    for (const range of [
      { fromMs: NOW - 30 * DAY, toMs: NOW },
      LONG,
      INSIDE_A_DAY,
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["technology", ["postgres"]]]),
        new Map([["user", ["user1%40acme.example"]]]),
        new Map([["group", ["group-1"]]]),
      ])
        await expectSameRows(now, range, chosen);
  });

  it("counts a rolled-up day from the rollup", async () => {
    if (!panel?.targets[0]) throw new Error("no Groups × resources panel");
    const now = panel.targets[0].rawSql;
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const first = async () =>
      (await rowsOf(now, range, new Map())).rows[0]?.slice(0, 3);
    // A rollup row no session backs, then the same key superseded with no sessions.
    // Written to the day's month too: a whole month of the range is read from the monthly rollup.
    const rollupRow = (sessions: number, later: number) =>
      Promise.all(
        ["daily", "monthly"].map((t) =>
          write(
            `INSERT INTO group_resource_rollups_${t} (day, user_group, resource_name,
            resource_technology, sessions, computed_at)
          VALUES (${t === "daily" ? `'${day}'` : `toStartOfMonth(toDate('${day}'))`}, 'zz-group', 'zz-nowhere', 'llm', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
          ),
        ),
      );
    const was = await first();
    await rollupRow(100_000, 0);
    expect(await first()).toEqual(["zz-group", "zz-nowhere", 100000]);
    await rollupRow(0, 1);
    expect(await first()).toEqual(was);
  });
});

// Machine accounts used by humans reads the whole rolled-up days of its range from
// machine_address_rollups_daily (with no environment, technology or resource filter) or
// machine_resource_rollups_daily (with one chosen), and the human side's from
// client_ip_rollups_daily at any filter, narrowed by one read of the machine addresses whatever
// the number of filters; the other days from sessions.
describe("Machine accounts used by humans over rolled-up days and raw days", () => {
  const {
    dashboard: firstSeen,
    panel,
    before,
    rowsOf,
    expectSameRows,
  } = rewrittenPanel(
    "sessionhouse-first-seen",
    "Machine accounts used by humans",
  );

  it("the rows of the query it replaced", async () => {
    if (!panel?.targets[0] || before === undefined)
      throw new Error("no Machine accounts used by humans panel");
    const now = panel.targets[0].rawSql;
    expect(now).toContain("machine_address_rollups_daily");
    expect(now).toContain("machine_resource_rollups_daily");
    expect(await rolledUpDays()).toContain(dayText(TODAY - 10 * DAY));
    let answered = 0;
    for (const range of [
      { fromMs: NOW - 30 * DAY, toMs: NOW },
      LONG,
      INSIDE_A_DAY,
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["technology", ["postgres"]]]),
        new Map([["user", ["user6"]]]),
        new Map([
          ["user", ["user6"]],
          ["resource", ["resource-1"]],
        ]),
      ]) {
        // A filter may leave a range within a day without the one machine account's sessions.
        const want = await expectSameRows(now, range, chosen, {
          mayBeEmpty: chosen.size > 0,
        });
        answered += want.rows.length > 0 ? 1 : 0;
      }
    expect(answered).toBeGreaterThanOrEqual(8);
  });

  it("narrows the human side with one read of the machine addresses, however many filters are chosen", async () => {
    if (!panel?.targets[0] || !firstSeen)
      throw new Error("no Machine accounts used by humans panel");
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const { variables } = await resolved(
      firstSeen,
      range,
      new Map([
        ["user", ["user6"]],
        ["resource", ["resource-1"]],
        ["technology", ["mysql"]],
      ]),
    );
    const sql = renderQuery(panel.targets[0].rawSql, {
      range,
      intervalMs: queryInterval(range),
      variables,
    });
    expect(
      sql.match(/\bSELECT client_ip_address FROM sessions\b/g)?.length,
    ).toBe(1);
    expect((await run(w, sql)).rows.length).toBeGreaterThan(0);
  });

  it("counts a rolled-up day from the rollups", async () => {
    if (!panel?.targets[0])
      throw new Error("no Machine accounts used by humans panel");
    const now = panel.targets[0].rawSql;
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const first = async () =>
      (await rowsOf(now, range, new Map())).rows[0]?.slice(0, 4);
    // Rollup rows no session backs: a machine account at a new address a person used too.
    const rollupRows = (sessions: number, later: number) =>
      Promise.all([
        write(
          `INSERT INTO machine_address_rollups_daily (day, user_key, client_ip_address, sessions, computed_at)
            VALUES ('${day}', 'zz-robot', '10.9.9.9', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
        ),
        write(
          `INSERT INTO client_ip_rollups_daily (day, client_ip_address, user_type, sessions, some_users, computed_at)
            VALUES ('${day}', '10.9.9.9', 'human', ${sessions}, ['zz-person'], now64(3) + toIntervalSecond(${later}))`,
        ),
      ]);
    const was = await first();
    await rollupRows(100_000, 0);
    expect(await first()).toEqual([
      "zz-robot",
      "10.9.9.9",
      ["zz-person"],
      100000,
    ]);
    await rollupRows(0, 1);
    expect(await first()).toEqual(was);
  });

  it("counts a rolled-up day from the per-resource rollup when a resource is chosen", async () => {
    if (!panel?.targets[0])
      throw new Error("no Machine accounts used by humans panel");
    const now = panel.targets[0].rawSql;
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const chosen = new Map([
      ["user", ["zz-robot"]],
      ["resource", ["zz-db"]],
    ]);
    const first = async () =>
      (await rowsOf(now, range, chosen)).rows[0]?.slice(0, 5);
    // Rollup rows no session backs: a machine account on a new resource at an address a person
    // used too; the account's sessions at the same address on another resource do not count.
    const rollupRows = (sessions: number, later: number) =>
      Promise.all([
        write(
          `INSERT INTO machine_resource_rollups_daily (day, user_key, resource_name, resource_technology, client_ip_address, sessions, computed_at)
            VALUES ('${day}', 'zz-robot', 'zz-db', 'postgres', '10.9.9.8', ${sessions}, now64(3) + toIntervalSecond(${later})),
                   ('${day}', 'zz-robot', 'zz-other', 'postgres', '10.9.9.8', ${sessions === 0 ? 0 : 7}, now64(3) + toIntervalSecond(${later}))`,
        ),
        write(
          `INSERT INTO client_ip_rollups_daily (day, client_ip_address, user_type, sessions, some_users, computed_at)
            VALUES ('${day}', '10.9.9.8', 'human', ${sessions}, ['zz-person'], now64(3) + toIntervalSecond(${later}))`,
        ),
      ]);
    expect(await first()).toBeUndefined();
    await rollupRows(5, 0);
    expect(await first()).toEqual([
      "zz-robot",
      "10.9.9.8",
      ["zz-person"],
      5,
      ["zz-db"],
    ]);
    await rollupRows(0, 1);
    expect(await first()).toBeUndefined();
  });
});

// New user → resource pairs, with a user or a resource chosen, counts the sessions of the whole
// rolled-up days after a pair's first day from session_rollups_daily, its first day and the days
// not rolled up from sessions FINAL; with neither chosen it reads sessions FINAL as before.
describe("New user → resource pairs over rolled-up days and raw days", () => {
  const {
    dashboard: firstSeen,
    panel,
    before,
  } = rewrittenPanel("sessionhouse-first-seen", "New user → resource pairs");

  it("the rows of the query it replaced", async () => {
    if (!firstSeen || !panel?.targets[0] || before === undefined)
      throw new Error("no New user → resource pairs panel");
    const now = panel.targets[0].rawSql;
    expect(now).toContain("session_rollups_daily");
    let answered = 0;
    for (const range of [
      { fromMs: TODAY - (DAYS + 2) * DAY, toMs: NOW },
      { fromMs: TODAY - (DAYS + 2) * DAY, toMs: TODAY - 10 * DAY + 9 * HOUR },
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["user", ["user6"]]]),
        new Map([["resource", ["resource-1"]]]),
        new Map([
          ["user", ["user6"]],
          ["resource", ["resource-1"]],
        ]),
      ]) {
        const what = `${JSON.stringify([...chosen])} ${range.toMs}`;
        const { variables } = await resolved(firstSeen, range, chosen);
        const rowsOf = async (sql: string) =>
          (
            await run(
              w,
              renderQuery(sql, {
                range,
                intervalMs: queryInterval(range),
                variables,
              }),
            )
          ).rows;
        const want = await rowsOf(before);
        answered += want.length > 0 ? 1 : 0;
        expect(await rowsOf(now), what).toEqual(want);
      }
    expect(answered).toBe(8);
  });
});

// Busiest users, Busiest resources and the user variables read the whole months of a long range
// from the monthly rollups, the other rolled-up days from session_rollups_daily and the rest
// from sessions FINAL: the rows of the queries they replaced (test/helpers/replaced-panels.ts).
describe("whole months from the monthly rollups", () => {
  // The previous month whole, with the partial day it starts on ten days before; from its first
  // day; the previous month alone (31 days or less: every day from sessions).
  const ranges: [string, TimeRange][] = [
    [
      "ten days before the previous month",
      { fromMs: monthStart(1) - 10 * DAY + 5 * HOUR, toMs: NOW },
    ],
    ["from the previous month", { fromMs: monthStart(1), toMs: NOW }],
    ["the previous month", { fromMs: monthStart(1), toMs: monthStart(0) }],
  ];
  const choices = [
    new Map<string, string[]>(),
    new Map([["technology", ["postgres"]]]),
    new Map([["user", ["user1%40acme.example"]]]),
    new Map([["resource", ["resource-1"]]]),
    new Map([["group", ["group-1"]]]),
  ];

  it.each([
    "Busiest users",
    "Busiest resources",
    "Sessions started",
    "Child sessions by parent",
  ])("%s: the rows of the query it replaced", async (title) => {
    const { panel, before, expectSameRows } = rewrittenPanel(
      "sessionhouse-sessions-overview",
      title,
    );
    if (!panel?.targets[0] || before === undefined)
      throw new Error(`no ${title} panel`);
    const rawSql = panel.targets[0].rawSql;
    expect(await rolledUpDays()).toContain(dayText(monthStart(1) + 15 * DAY));
    for (const [, range] of ranges)
      for (const chosen of choices) await expectSameRows(rawSql, range, chosen);
  });

  it.each(["sessionhouse-sessions-overview", "sessionhouse-first-seen"])(
    "%s user variable: the options of the query it replaced",
    async (uid) => {
      const r = REPLACED_VARIABLES.find((x) => x.uid === uid);
      const d = loadDashboards().find(
        (x) => x.dashboard.uid === uid,
      )?.dashboard;
      const v = d && queryVariables(d).find((x) => x.name === "user");
      if (!r || !d || !v) throw new Error(`no ${uid} user variable`);
      const once = r.sql.replace("FROM sessions\n", "FROM sessions FINAL\n");
      for (const [name, range] of ranges) {
        const { variables } = await resolved(d, range);
        const sql = (raw: string) =>
          renderQuery(raw, {
            range,
            intervalMs: queryInterval(range),
            variables,
          });
        const want = await run(w, sql(once));
        expect(want.rows.length, name).toBeGreaterThan(0);
        expect((await run(w, sql(v.query))).rows, name).toEqual(want.rows);
      }
    },
  );

  it("reads a whole month from the monthly rollups (parents: the daily one), superseded keys left out", async () => {
    const month = dayText(monthStart(1));
    const [range] = ranges;
    if (!range) throw new Error("no range");
    const overview = loadDashboards().find(
      (x) => x.dashboard.uid === "sessionhouse-sessions-overview",
    )?.dashboard;
    const users = overview?.panels.find((p) => p.title === "Busiest users");
    const resources = overview?.panels.find(
      (p) => p.title === "Busiest resources",
    );
    const started = overview?.panels.find(
      (p) => p.title === "Sessions started",
    );
    const children = overview?.panels.find(
      (p) => p.title === "Child sessions by parent",
    );
    if (!overview || !users || !resources || !started || !children)
      throw new Error("no panels");
    const firsts = async () => [
      (await panelRows(children, range[1])).rows[0]?.slice(0, 4),
      (await panelRows(users, range[1])).rows[0]?.slice(0, 3),
      (await panelRows(resources, range[1])).rows[0]?.slice(0, 3),
      Number((await panelRows(started, range[1])).rows[0]?.[0]),
      (await resolved(overview, range[1])).variables.find(
        (v) => v.name === "user",
      )?.options[0],
    ];
    // Monthly rows no session backs, then the same keys superseded with no sessions.
    const monthlyRows = (sessions: number, later: number) =>
      Promise.all([
        write(
          `INSERT INTO user_rollups_monthly (day, user_key, user_type, sessions, computed_at)
            VALUES ('${month}', 'zz-nobody', 'human', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
        ),
        write(
          `INSERT INTO resource_rollups_monthly (day, resource_name, resource_technology, sessions, computed_at)
            VALUES ('${month}', 'zz-nowhere', 'llm', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
        ),
        write(
          `INSERT INTO technology_rollups_monthly (day, resource_technology, sessions, computed_at)
            VALUES ('${month}', 'zz-tech', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
        ),
        // A daily row: the parents' rollup is per day.
        write(
          `INSERT INTO child_session_rollups_daily (day, parent_session_id, child_sessions, some_resources, user_key, computed_at)
            VALUES ('${dayText(monthStart(1) + 15 * DAY)}', 'zz-parent', ${sessions}, ['zz-nowhere'], 'zz-nobody', now64(3) + toIntervalSecond(${later}))`,
        ),
      ]);
    const was = await firsts();
    await monthlyRows(100_000, 0);
    expect(await firsts()).toEqual([
      ["zz-parent", 100000, ["zz-nowhere"], "zz-nobody"],
      ["zz-nobody", "human", 100000],
      ["zz-nowhere", "llm", 100000],
      Number(was[3]) + 100_000,
      "zz-nobody",
    ]);
    await monthlyRows(0, 1);
    expect(await firsts()).toEqual(was);
  });
});

// Client IP addresses and the human side of Machine accounts used by humans read the whole months
// of a long range from client_ip_rollups_monthly, the other rolled-up days from
// client_ip_rollups_daily and the rest from sessions: the rows of the queries they replaced.
describe("Client IP addresses and Machine accounts used by humans over whole months", () => {
  const month = dayText(monthStart(1));
  const ranges = WHOLE_MONTH_RANGES;
  const addresses = rewrittenPanel(
    "sessionhouse-sessions-overview",
    "Client IP addresses",
  );
  const machines = rewrittenPanel(
    "sessionhouse-first-seen",
    "Machine accounts used by humans",
  );

  it("the rows of the queries they replaced", async () => {
    const a = addresses.panel?.targets[0]?.rawSql;
    const m = machines.panel?.targets[0]?.rawSql;
    if (a === undefined || m === undefined) throw new Error("no panels");
    expect(a).toContain("client_ip_rollups_monthly");
    expect(m).toContain("client_ip_rollups_monthly");
    expect(await rolledUpDays()).toContain(dayText(monthStart(1) + 15 * DAY));
    for (const range of ranges) {
      await addresses.expectSameRows(a, range, new Map());
      // Cut at one row: the address the ranking picks first is the busiest, as the replaced
      // query's first row.
      await addresses.expectSameRows(a, range, new Map(), { cap: "1" });
      await addresses.expectSameRows(
        a,
        range,
        new Map([["client_ip", ["10.1.0.1"]]]),
        { mayBeEmpty: true },
      );
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["user", ["user6"]]]),
        new Map([["resource", ["resource-1"]]]),
      ])
        await machines.expectSameRows(m, range, chosen, {
          mayBeEmpty: chosen.size > 0,
        });
    }
  });

  it("counts a whole month from the monthly rollup, superseded keys left out", async () => {
    const a = addresses.panel?.targets[0]?.rawSql;
    const m = machines.panel?.targets[0]?.rawSql;
    if (a === undefined || m === undefined) throw new Error("no panels");
    const [range] = ranges;
    if (!range) throw new Error("no range");
    const firsts = async () => [
      (await addresses.rowsOf(a, range, new Map())).rows[0]?.slice(0, 4),
      (await machines.rowsOf(m, range, new Map())).rows[0]?.slice(0, 4),
    ];
    // Rollup rows no session backs: people at a new address over the month, and a machine
    // account there on one of its days.
    const rows = (sessions: number, later: number) =>
      Promise.all([
        write(
          `INSERT INTO client_ip_rollups_monthly (day, client_ip_address, user_type, sessions, some_users, computed_at)
            VALUES ('${month}', '10.9.9.7', 'human', ${sessions}, ['zz-person'], now64(3) + toIntervalSecond(${later}))`,
        ),
        write(
          `INSERT INTO machine_address_rollups_daily (day, user_key, client_ip_address, sessions, computed_at)
            VALUES ('${dayText(monthStart(1) + 15 * DAY)}', 'zz-robot', '10.9.9.7', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
        ),
      ]);
    const was = await firsts();
    await rows(100_000, 0);
    expect(await firsts()).toEqual([
      ["10.9.9.7", 100000, 0, ["zz-person"]],
      ["zz-robot", "10.9.9.7", ["zz-person"], 100000],
    ]);
    await rows(0, 1);
    expect(await firsts()).toEqual(was);
  });
});

// Groups × resources reads the whole months of a long range from group_resource_rollups_monthly,
// the other rolled-up days from group_resource_rollups_daily and the rest from sessions: the rows
// of the query it replaced, in one read of each (no second read narrowed to the top pairs).
describe("Groups × resources over whole months", () => {
  const month = dayText(monthStart(1));
  const ranges = WHOLE_MONTH_RANGES;
  const { panel, rowsOf, expectSameRows, sqlReading } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Groups × resources",
  );

  it("the rows of the query it replaced", async () => {
    const sql = sqlReading("group_resource_rollups_monthly");
    expect(await rolledUpDays()).toContain(dayText(monthStart(1) + 15 * DAY));
    for (const range of ranges)
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["technology", ["postgres"]]]),
        new Map([["resource", ["resource-1"]]]),
        new Map([["user", ["user1%40acme.example"]]]),
      ])
        await expectSameRows(sql, range, chosen, {
          mayBeEmpty: chosen.size > 0,
        });
    // A cap that cuts the pairs: the same first pairs.
    await expectSameRows(
      sql,
      ranges[0] ?? { fromMs: 0, toMs: NOW },
      new Map(),
      {
        cap: "3",
      },
    );
  });

  it("counts a whole month from the monthly rollup, superseded keys left out", async () => {
    const sql = panel?.targets[0]?.rawSql;
    const [range] = ranges;
    if (sql === undefined || !range)
      throw new Error("no Groups × resources panel");
    const first = async () =>
      (await rowsOf(sql, range, new Map())).rows[0]?.slice(0, 3);
    // A monthly row no session backs, then the same key superseded with no sessions.
    const monthRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO group_resource_rollups_monthly (day, user_group, resource_name,
            resource_technology, sessions, computed_at)
          VALUES ('${month}', 'zz-group', 'zz-nowhere', 'llm', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
    const was = await first();
    await monthRow(100_000, 0);
    expect(await first()).toEqual(["zz-group", "zz-nowhere", 100000]);
    await monthRow(0, 1);
    expect(await first()).toEqual(was);
  });
});

// Users × resources reads the whole rolled-up days of its range, at any length, from
// user_resource_rollups_daily (which holds every variable's column) and the other days from
// sessions FINAL.
describe("Users × resources over rolled-up days and raw days", () => {
  const { panel, before, rowsOf, expectSameRows } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Users × resources",
  );

  it("the rows of the query it replaced, at the panel's cap and at a cap that cuts", async () => {
    if (!panel?.targets[0] || before === undefined)
      throw new Error("no Users × resources panel");
    const now = panel.targets[0].rawSql;
    expect(now).toContain("user_resource_rollups_daily");
    expect(await rolledUpDays()).toContain(dayText(TODAY - 10 * DAY));
    for (const range of [LONG, INSIDE_A_DAY])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["technology", ["postgres"]]]),
        new Map([["resource", ["resource-1"]]]),
        new Map([["user", ["user1%40acme.example"]]]),
        new Map([["group", ["group-1"]]]),
        new Map([["connector", ["edge-1"]]]),
      ])
        // A cap of 7 cuts the pairs of the last seven days: the first pass reads only them.
        for (const cap of chosen.size === 0 || chosen.has("user")
          ? ["1000", "7"]
          : ["1000"])
          await expectSameRows(now, range, chosen, { cap });
  });

  it("counts a rolled-up day from the rollup", async () => {
    if (!panel?.targets[0]) throw new Error("no Users × resources panel");
    const now = panel.targets[0].rawSql;
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const pair = async () =>
      (await rowsOf(now, range, new Map())).rows.find(
        (r) => r[0] === "zz-nobody",
      );
    // A rollup row no session backs, then the same key superseded with no sessions.
    const rollupRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO user_resource_rollups_daily (day, user_key, resource_name,
            resource_technology, user_type, sessions, first_start_time, last_start_time,
            native_usernames, computed_at)
          VALUES ('${day}', 'zz-nobody', 'zz-nowhere', 'llm', 'human', ${sessions},
            '${day} 01:00:00', '${day} 02:00:00', ['zz-db-user'],
            now64(3) + toIntervalSecond(${later}))`,
      );
    expect(await pair()).toBeUndefined();
    await rollupRow(100_000, 0);
    expect((await pair())?.slice(0, 5)).toEqual([
      "zz-nobody",
      "human",
      "zz-nowhere",
      "llm",
      100000,
    ]);
    await rollupRow(0, 1);
    expect(await pair()).toBeUndefined();
  });
});

// Resources reached per group and Sessions by user type read the whole rolled-up days of their
// range from user_resource_rollups_daily (every variable's column is there) and the other days
// from sessions.
describe.each(["Resources reached per group", "Sessions by user type"])(
  "%s over rolled-up days and raw days",
  (title) => {
    const { panel, before, expectSameRows } = rewrittenPanel(
      "sessionhouse-who-accessed-what",
      title,
    );

    it("the rows of the query it replaced", async () => {
      if (!panel?.targets[0] || before === undefined)
        throw new Error(`no ${title} panel`);
      const now = panel.targets[0].rawSql;
      expect(now).toContain("user_resource_rollups_daily");
      for (const range of [LONG, INSIDE_A_DAY])
        for (const chosen of [
          new Map<string, string[]>(),
          new Map([["resource", ["resource-1"]]]),
          new Map([["group", ["group-1"]]]),
          new Map([["connector", ["edge-1"]]]),
        ])
          await expectSameRows(now, range, chosen);
    });
  },
);

// Sessions (choose a user or a resource above) reads only the days that hold its rows: the days
// with a matching session, counted back from the range's end until they hold 1000 sessions (per
// day from the rollups for the rolled-up days, from sessions for the others).
describe("Sessions (choose a user or a resource above) over rolled-up days and raw days", () => {
  const { panel, before, expectSameRows } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Sessions (choose a user or a resource above)",
  );

  it("the rows of the query it replaced, at the panel's cap and at caps the days' counts decide", async () => {
    if (!panel?.targets[0] || before === undefined)
      throw new Error("no Sessions (choose a user or a resource above) panel");
    const now = panel.targets[0].rawSql;
    expect(now).toContain("user_resource_rollups_daily");
    // Over 50 days at All the range holds more than 1000 sessions: only its last days are read.
    for (const range of [
      LONG,
      { fromMs: TODAY - 50 * DAY, toMs: TODAY - 20 * DAY + 3 * HOUR },
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["user", ["user1%40acme.example"]]]),
        new Map([["group", ["group-1"]]]),
      ])
        for (const cap of ["1000", "7"])
          await expectSameRows(now, range, chosen, { cap });
  });
});

// Users × resources reads the whole months of a long range from user_resource_rollups_monthly,
// the other rolled-up days from user_resource_rollups_daily and the rest from sessions: the rows
// of the query it replaced, the newest pairs narrowing both rollups in one read of them.
describe("Users × resources over whole months", () => {
  const month = dayText(monthStart(1));
  const {
    dashboard: who,
    panel,
    rowsOf,
    expectSameRows,
    sqlReading,
  } = rewrittenPanel("sessionhouse-who-accessed-what", "Users × resources");

  it("the rows of the query it replaced, at the panel's cap and at a cap that cuts", async () => {
    const sql = sqlReading("user_resource_rollups_monthly");
    expect(
      sql.match(
        /\(user_key, resource_name\) IN \(SELECT user_key, resource_name FROM newest\)/g,
      )?.length,
    ).toBe(1);
    expect(await rolledUpDays()).toContain(dayText(monthStart(1) + 15 * DAY));
    for (const range of [...WHOLE_MONTH_RANGES, INSIDE_A_DAY])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["technology", ["postgres"]]]),
        new Map([["resource", ["resource-1"]]]),
        new Map([["user", ["user1%40acme.example"]]]),
        new Map([["group", ["group-1"]]]),
        new Map([["connector", ["edge-1"]]]),
      ])
        // A cap of 7 takes the pairs of the last seven days; 1000 all the range's.
        for (const cap of chosen.size === 0 ? ["1000", "7"] : ["1000"])
          await expectSameRows(sql, range, chosen, { cap });
  });

  it("counts a whole month from the monthly rollup, superseded keys left out", async () => {
    const sql = panel?.targets[0]?.rawSql;
    const [range] = WHOLE_MONTH_RANGES;
    if (sql === undefined || !range)
      throw new Error("no Users × resources panel");
    const pair = async () =>
      (await rowsOf(sql, range, new Map())).rows.find(
        (r) => r[0] === "zz-nobody",
      );
    // A monthly row no session backs, then the same key superseded with no sessions.
    const monthRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO user_resource_rollups_monthly (day, user_key, resource_name,
            resource_technology, user_type, sessions, first_start_time, last_start_time,
            native_usernames, computed_at)
          VALUES ('${month}', 'zz-nobody', 'zz-nowhere', 'llm', 'human', ${sessions},
            '${month} 01:00:00', '${month} 02:00:00', ['zz-db-user'],
            now64(3) + toIntervalSecond(${later}))`,
      );
    expect(await pair()).toBeUndefined();
    await monthRow(100_000, 0);
    expect((await pair())?.slice(0, 8)).toEqual([
      "zz-nobody",
      "human",
      "zz-nowhere",
      "llm",
      100000,
      `${month} 01:00:00.000`,
      `${month} 02:00:00.000`,
      ["zz-db-user"],
    ]);
    await monthRow(0, 1);
    expect(await pair()).toBeUndefined();
  });

  it("reads the last seven days' rows once, to count the newest pairs and to keep them", async () => {
    const sql = panel?.targets[0]?.rawSql;
    if (sql === undefined || !who)
      throw new Error("no Users × resources panel");
    // Every whole day rolled up; a cap the last seven days fill. The panel reads the range's rows
    // once for its pairs and the last seven days' once for the newest pairs, and no more than
    // rollup_days' rows beside them.
    const range = { fromMs: TODAY - 30 * DAY, toMs: TODAY - 2 * DAY };
    const { variables } = await resolved(who, range);
    const rowsRead = async (q: string) => {
      const rs = await w.client.query({
        query: renderQuery(q, {
          range,
          intervalMs: queryInterval(range),
          variables,
        }),
        format: "JSON",
      });
      const body = await rs.json<unknown>();
      return Number(body.statistics?.rows_read);
    };
    const inRange = "toDateTime(day, 'UTC') >= $__fromTime";
    const lastWeek = "day >= toDate($__toTime - INTERVAL 7 DAY)";
    const parts = await Promise.all(
      [
        "SELECT count() FROM sessions FINAL WHERE $__timeFilter(start_time)",
        `SELECT count() FROM user_resource_rollups_daily FINAL WHERE ${inRange}`,
        `SELECT count() FROM user_resource_rollups_daily FINAL WHERE ${inRange} AND ${lastWeek}`,
      ].map(rowsRead),
    );
    // The panel's four reads of the days rolled up.
    parts.push(4 * (await rowsRead("SELECT count() FROM rollup_days FINAL")));
    const read = await rowsRead(sql.replaceAll("LIMIT 1000", "LIMIT 7"));
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThanOrEqual(parts.reduce((a, b) => a + b, 0));
  });
});

// A gated panel's rollup branches start with RANGE_GATES: the engine folds a false gate before
// planning, so a range without a whole day (a whole month) reads no daily (monthly) rollup and
// builds none of its sets; the gates hold exactly when the range holds a whole UTC day (month).
describe("rollup branches a range cannot use", () => {
  const second = 1000;
  // Grafana sends both ends in whole seconds.
  const seconds = (ms: number) => Math.floor(ms / second) * second;
  const wholeDay = (r: TimeRange) =>
    Math.ceil(r.fromMs / DAY) * DAY + DAY <=
    Math.floor(r.toMs / second) * second;
  const wholeMonth = (r: TimeRange) => {
    const from = new Date(seconds(r.fromMs));
    const first = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1);
    const start =
      first === seconds(r.fromMs)
        ? first
        : Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1);
    const next = new Date(start);
    return (
      Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 1) <=
      seconds(r.toMs)
    );
  };
  const ranges: TimeRange[] = [
    INSIDE_A_DAY,
    LONG,
    ...WHOLE_MONTH_RANGES,
    { fromMs: TODAY - 10 * DAY, toMs: TODAY - 9 * DAY },
    { fromMs: TODAY - 10 * DAY + second, toMs: TODAY - 9 * DAY },
    { fromMs: TODAY - 10 * DAY, toMs: TODAY - 9 * DAY - second },
    { fromMs: NOW - 20 * DAY, toMs: NOW },
    { fromMs: monthStart(1), toMs: monthStart(0) },
    { fromMs: monthStart(1) + second, toMs: monthStart(0) },
    { fromMs: monthStart(1), toMs: monthStart(0) - second },
    { fromMs: monthStart(14) - DAY, toMs: monthStart(13) + DAY },
  ];

  it("the gates hold exactly when the range holds a whole day, a whole month", async () => {
    for (const range of ranges) {
      const sql = renderQuery(
        `SELECT ${RANGE_GATES.wholeDay}, ${RANGE_GATES.wholeMonth}`,
        { range, intervalMs: queryInterval(range), variables: [] },
      );
      const what = `${new Date(range.fromMs).toISOString()} to ${new Date(range.toMs).toISOString()}`;
      expect((await run(w, sql)).rows[0]?.map(Number), what).toEqual([
        wholeDay(range) ? 1 : 0,
        wholeMonth(range) ? 1 : 0,
      ]);
    }
  });

  /** The rollup reads of the panel's plan over `range` the engine did not fold to nothing. */
  async function unfoldedRollupReads(
    uid: string,
    title: string,
    range: TimeRange,
  ): Promise<string[]> {
    const { dashboard: d, panel } = rewrittenPanel(uid, title);
    const raw = panel?.targets[0]?.rawSql;
    if (!d || raw === undefined) throw new Error(`no ${title} panel`);
    const { variables } = await resolved(d, range);
    const plan = await run(
      w,
      `EXPLAIN ${renderQuery(raw, { range, intervalMs: queryInterval(range), variables })}`,
    );
    const lines = plan.rows.map((r) => String(r[0]));
    return lines.flatMap((line, i) => {
      const table =
        /ReadFromMergeTree \((?:[^.()]+\.)?([a-z_]+_rollups_(?:daily|monthly))\)/.exec(
          line,
        )?.[1];
      const folded = lines[i - 1]?.includes("Filter column: 0") === true;
      return table !== undefined && !folded ? [table] : [];
    });
  }

  it.each(GATED_PANELS.map((p) => [p.title, p] as const))(
    "%s: no rollup read without a whole day, no monthly one without a whole month",
    async (_title, { uid, title }) => {
      expect(
        await unfoldedRollupReads(uid, title, INSIDE_A_DAY),
        "inside a day",
      ).toEqual([]);
      const days = await unfoldedRollupReads(uid, title, {
        fromMs: NOW - 20 * DAY,
        toMs: NOW,
      });
      expect(days.length, "twenty days").toBeGreaterThan(0);
      expect(
        days.filter((t) => t.endsWith("_monthly")),
        "twenty days",
      ).toEqual([]);
      const [month] = WHOLE_MONTH_RANGES;
      if (!month) throw new Error("no whole-month range");
      expect(
        (await unfoldedRollupReads(uid, title, month)).filter((t) =>
          t.endsWith("_monthly"),
        ).length,
        "a whole month",
      ).toBeGreaterThan(0);
    },
  );
});

// The sessions overview's client_ip variable reads the whole months of its range from
// client_ip_rollups_monthly, the other rolled-up days from client_ip_rollups_daily and the rest
// from sessions FINAL, at any range length: the options of the query it replaced when that
// counts each session once, in the same order.
describe("the client_ip variable over rolled-up days and raw days", () => {
  const month = dayText(monthStart(1));
  const d = loadDashboards().find(
    (x) => x.dashboard.uid === REPLACED_CLIENT_IP_VARIABLE.uid,
  )?.dashboard;
  const v = d && queryVariables(d).find((x) => x.name === "client_ip");

  it("the options of the query it replaced, at its cap and at a cap that cuts", async () => {
    if (!d || !v) throw new Error("no client_ip variable");
    expect(v.query).toContain("client_ip_rollups_monthly");
    const once = REPLACED_CLIENT_IP_VARIABLE.sql.replace(
      "FROM sessions\n",
      "FROM sessions FINAL\n",
    );
    expect(once).not.toBe(REPLACED_CLIENT_IP_VARIABLE.sql);
    for (const range of [...WHOLE_MONTH_RANGES, LONG, INSIDE_A_DAY])
      for (const cap of ["1000", "2"]) {
        const { variables } = await resolved(d, range);
        const sql = (raw: string) =>
          renderQuery(raw.replaceAll("LIMIT 1000", `LIMIT ${cap}`), {
            range,
            intervalMs: queryInterval(range),
            variables,
          });
        const what = `${range.fromMs} to ${range.toMs} LIMIT ${cap}`;
        const want = await run(w, sql(once));
        expect(want.rows.length, what).toBeGreaterThan(0);
        expect((await run(w, sql(v.query))).rows, what).toEqual(want.rows);
      }
  });

  it("counts a whole month from the monthly rollup, superseded keys left out", async () => {
    const [range] = WHOLE_MONTH_RANGES;
    if (!d || !v || !range) throw new Error("no client_ip variable");
    const first = async () =>
      (await resolved(d, range)).variables.find((x) => x.name === "client_ip")
        ?.options[0];
    // A monthly row no session backs, then the same key superseded with no sessions.
    const monthRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO client_ip_rollups_monthly (day, client_ip_address, user_type, sessions, computed_at)
          VALUES ('${month}', '10.9.9.6', 'human', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
    const was = await first();
    await monthRow(100_000, 0);
    expect(await first()).toBe("10.9.9.6");
    await monthRow(0, 1);
    expect(await first()).toBe(was);
  });
});

// Humans acting through machines reads the whole rolled-up days of its range, at any length, from
// end_user_rollups_daily (every variable's column is there) and the other days from sessions.
describe("Humans acting through machines over rolled-up days and raw days", () => {
  const { rowsOf, expectSameRows, sqlReading } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Humans acting through machines",
  );
  const now = () => sqlReading("end_user_rollups_daily");

  it("the rows of the query it replaced", async () => {
    const sql = now();
    expect(await rolledUpDays()).toContain(dayText(TODAY - 10 * DAY));
    const answers: unknown[][] = [];
    for (const range of [
      { fromMs: NOW - 30 * DAY, toMs: NOW },
      { fromMs: TODAY - 40 * DAY, toMs: TODAY - 10 * DAY },
      LONG,
      INSIDE_A_DAY,
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["user", ["user7"]]]),
        new Map([["resource", ["resource-1"]]]),
        new Map([["technology", ["postgres"]]]),
        new Map([["group", ["group-1"]]]),
        new Map([["connector", ["edge-1"]]]),
      ])
        answers.push(...(await expectSameRows(sql, range, chosen)).rows);
    // The fixture's machine accounts act for people: the answers are not all zero.
    expect(answers.filter((r) => Number(r[0]) > 0).length).toBeGreaterThan(10);
    expect(answers.filter((r) => Number(r[1]) > 0).length).toBeGreaterThan(10);
  });

  it("counts a rolled-up day from the rollup", async () => {
    const sql = now();
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const answer = async () =>
      (await rowsOf(sql, range, new Map())).rows[0]?.map(Number);
    // A rollup row no session backs, then the same key superseded with no sessions.
    const rollupRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO end_user_rollups_daily (day, user_key, resource_name, resource_technology,
            connector_name, user_groups, sessions, end_users, computed_at)
          SELECT '${day}', 'zz-machine', 'zz-nowhere', 'llm', '', [], ${sessions},
            uniqState('zz-person@acme.example'), now64(3) + toIntervalSecond(${later})`,
      );
    const was = await answer();
    if (!was) throw new Error("no answer");
    await rollupRow(100_000, 0);
    expect(await answer()).toEqual([
      (was[0] ?? 0) + 100_000,
      (was[1] ?? 0) + 1,
    ]);
    await rollupRow(0, 1);
    expect(await answer()).toEqual(was);
  });
});

// Machine vs human sessions over time, with no filter chosen and an interval of whole half hours,
// reads the whole rolled-up days of its range from user_type_rollups_half_hourly and the other
// days from sessions; with a filter or a shorter interval every day from sessions.
describe("Machine vs human sessions over time over rolled-up days and raw days", () => {
  const { rowsOf, expectSameRows, sqlReading } = rewrittenPanel(
    "sessionhouse-who-accessed-what",
    "Machine vs human sessions over time",
  );
  const now = () => sqlReading("user_type_rollups_half_hourly");

  it("the rows of the query it replaced", async () => {
    const sql = now();
    expect(await rolledUpDays()).toContain(dayText(TODAY - 10 * DAY));
    for (const range of [
      { fromMs: NOW - 30 * DAY, toMs: NOW },
      { fromMs: TODAY - 40 * DAY, toMs: TODAY - 10 * DAY },
      { fromMs: TODAY - 17 * DAY + 5 * HOUR, toMs: TODAY - 10 * DAY },
      LONG,
      INSIDE_A_DAY,
    ])
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([["resource", ["resource-1"]]]),
        new Map([["user", ["user7"]]]),
        new Map([["group", ["group-1"]]]),
      ])
        await expectSameRows(sql, range, chosen);
  });

  it("counts a rolled-up day's half hour from the rollup with no filter chosen", async () => {
    const sql = now();
    const day = dayText(TODAY - 10 * DAY);
    const range = { fromMs: NOW - 30 * DAY, toMs: NOW };
    const zz = async (chosen: ReadonlyMap<string, string[]>) =>
      (await rowsOf(sql, range, chosen)).rows.filter((r) => r[1] === "zz-type");
    // A rollup row no session backs, then the same key superseded with no sessions.
    const rollupRow = (sessions: number, later: number) =>
      write(
        `INSERT INTO user_type_rollups_half_hourly (day, half_hour, user_type, sessions, computed_at)
          VALUES ('${day}', toDateTime('${day} 12:00:00', 'UTC'), 'zz-type', ${sessions}, now64(3) + toIntervalSecond(${later}))`,
      );
    await rollupRow(100_000, 0);
    expect((await zz(new Map())).map((r) => r[2])).toEqual([100_000]);
    // A filter reads every day from sessions, which hold no such session.
    expect(await zz(new Map([["resource", ["resource-1"]]]))).toEqual([]);
    await rollupRow(0, 1);
    expect(await zz(new Map())).toEqual([]);
  });
});

describe("sessions overview over a long range", () => {
  // Starts and ends inside a day: the partial days are read from sessions.
  // Whole days from before the raw retention (set below) to now.
  const beyond: TimeRange = { fromMs: TODAY - 55 * DAY, toMs: NOW };
  // Eight days, all before the raw retention.
  const old: TimeRange = { fromMs: TODAY - 52 * DAY, toMs: TODAY - 44 * DAY };
  const truth = new Map<string, Result>();

  it("has rolled-up days, days not rolled up yet and today", async () => {
    const days = await rolledUpDays();
    expect(days).toContain(dayText(TODAY - 50 * DAY));
    expect(days).toContain(dayText(TODAY - (OPEN_DAYS + 1) * DAY));
    for (let k = 1; k <= OPEN_DAYS; k++)
      expect(days).not.toContain(dayText(TODAY - k * DAY));
    expect(days).not.toContain(dayText(TODAY));
    expect(rollupPanels.length).toBeGreaterThanOrEqual(9);
  });

  it.each(rollupPanels.map((p) => [p.title, p] as const))(
    "%s: answers what the raw rows answer",
    async (title, panel) => {
      for (const [name, range] of [
        ["long", LONG],
        ["beyond", beyond],
        ["old", old],
      ] as const) {
        const raw = await panelRows(panel, range, { rawOnly: true });
        truth.set(`${title}/${name}`, raw);
        expectSameAnswer(
          await panelRows(panel, range),
          raw,
          `${title} ${name}`,
        );
      }
      // A filter the per-technology rollup honours, and one only the finer rollup does.
      for (const chosen of [
        new Map([["technology", ["postgres"]]]),
        new Map([["user", ["user1%40acme.example"]]]),
      ]) {
        const what = `${title} ${JSON.stringify([...chosen])}`;
        const raw = await panelRows(panel, LONG, { rawOnly: true, chosen });
        expectSameAnswer(await panelRows(panel, LONG, { chosen }), raw, what);
      }
    },
  );

  // With no filter but technology, the rolled-up days come from the per-technology rollup; the
  // query it replaced (test/helpers/replaced-panels.ts) read them from session_rollups_daily.
  it("Sessions over time by technology: the rows of the query it replaced", async () => {
    const panel = dashboard.panels.find(
      (p) => p.title === "Sessions over time by technology",
    );
    const before = REPLACED_PANELS.find((r) => r.title === panel?.title)?.sql;
    if (!panel || before === undefined)
      throw new Error("no Sessions over time by technology panel");
    const replaced: Panel = {
      ...panel,
      targets: panel.targets.map((t) => ({
        ...t,
        rawSql: before,
      })),
    };
    for (const chosen of [
      new Map<string, string[]>(),
      new Map([["technology", ["postgres"]]]),
      new Map([["user", ["user1%40acme.example"]]]),
    ])
      for (const range of [LONG, beyond, old]) {
        const what = `${JSON.stringify([...chosen])} ${range.fromMs}`;
        const want = await panelRows(replaced, range, { chosen });
        expect(want.rows.length, what).toBeGreaterThan(0);
        expect((await panelRows(panel, range, { chosen })).rows, what).toEqual(
          want.rows,
        );
      }
  });

  describe("once the TTL deleted the oldest raw rows", () => {
    beforeAll(async () => {
      const before = await countRaw("1");
      resolvedCache.clear();
      await applyRetention(
        w,
        retentionSettings({
          clickhouse: { retentionDays: RETENTION_DAYS },
          retention: config.retention,
        }),
      );
      await write("OPTIMIZE TABLE sessions FINAL");
      expect(await countRaw("1")).toBeLessThan(before);
    }, 60_000);

    it("the raw rows of the old days are gone", async () => {
      expect(
        await countRaw(
          `start_time < fromUnixTimestamp64Milli(${TODAY - (RETENTION_DAYS + 1) * DAY})`,
        ),
      ).toBe(0);
    });

    it.each(rollupPanels.map((p) => [p.title, p] as const))(
      "%s: still shows them from the rollups, also over a short range before the retention",
      async (title, panel) => {
        for (const name of ["beyond", "old"] as const) {
          const want = truth.get(`${title}/${name}`);
          if (!want) throw new Error(`${title} ${name}: no answer from before`);
          expectSameAnswer(
            await panelRows(panel, name === "beyond" ? beyond : old),
            want,
            `${title} ${name}`,
          );
        }
      },
    );

    it("reads every day from sessions when a group, client IP or ad hoc filter is set", async () => {
      const panel = rollupPanels.find((p) => p.title === "Sessions started");
      if (!panel) throw new Error("no Sessions started panel");
      const sessions = (r: Result) => Number(r.rows[0]?.[0]);
      const all = sessions(await panelRows(panel, beyond));
      const filters: [string, Parameters<typeof panelRows>[2]][] = [
        ["group", { chosen: new Map([["group", ["group-1"]]]) }],
        ["client IP", { chosen: new Map([["client_ip", ["10.0.0.2"]]]) }],
        [
          "ad hoc",
          { adHoc: [{ key: "session_status", operator: "!=", value: "x" }] },
        ],
      ];
      for (const [what, options] of filters) {
        const got = await panelRows(panel, beyond, options);
        // The raw rows only: the days the TTL deleted are missing.
        expect(got.rows, what).toEqual(
          (await panelRows(panel, beyond, { ...options, rawOnly: true })).rows,
        );
        expect(sessions(got), what).toBeLessThan(all);
      }
      // The ad hoc filter keeps every row: only the source differs.
      expect(
        sessions(
          await panelRows(panel, beyond, {
            adHoc: [{ key: "session_status", operator: "!=", value: "x" }],
          }),
        ),
      ).toBe(
        await countRaw(
          `start_time >= fromUnixTimestamp64Milli(${beyond.fromMs}) AND start_time <= fromUnixTimestamp64Milli(${beyond.toMs})`,
        ),
      );
    });

    it("Client IP addresses counts a rolled-up day from the rollup", async () => {
      const panel = rollupPanels.find((p) => p.title === "Client IP addresses");
      if (!panel)
        throw new Error("no Client IP addresses panel reading a rollup");
      const day = dayText(TODAY - 20 * DAY);
      const first = async () =>
        (await panelRows(panel, beyond)).rows[0]?.slice(0, 4);
      // A rollup row no session backs, then the same key superseded with no sessions; in the
      // daily rollup and its month's (a whole month of the range is read from the monthly one).
      const rollupRow = (sessions: number, later: number) =>
        Promise.all([
          write(
            `INSERT INTO client_ip_rollups_daily (day, client_ip_address, sessions, some_users, computed_at)
            VALUES ('${day}', '10.9.9.9', ${sessions}, ['zz-nobody'], now64(3) + toIntervalSecond(${later}))`,
          ),
          write(
            `INSERT INTO client_ip_rollups_monthly (day, client_ip_address, sessions, some_users, computed_at)
            VALUES (toStartOfMonth(toDate('${day}')), '10.9.9.9', ${sessions}, ['zz-nobody'], now64(3) + toIntervalSecond(${later}))`,
          ),
        ]);
      const was = await first();
      await rollupRow(100_000, 0);
      expect(await first()).toEqual(["10.9.9.9", 100000, 0, ["zz-nobody"]]);
      await rollupRow(0, 1);
      expect(await first()).toEqual(was);
    });

    it("reads only sessions over a range of 31 days or less inside the retention", async () => {
      const panel = rollupPanels.find((p) => p.title === "Sessions started");
      if (!panel) throw new Error("no Sessions started panel");
      const short: TimeRange = { fromMs: TODAY - 20 * DAY, toMs: NOW };
      const day = dayText(TODAY - 10 * DAY);
      expect(await rolledUpDays()).toContain(day);
      const before = await panelRows(panel, short);
      const beforeLong = await panelRows(panel, beyond);
      // Rollup rows no session backs: only a read of the rollups can count them.
      await write(
        `INSERT INTO session_rollups_daily (day, user_key, resource_name, resource_technology,
            connector_name, session_status, sessions, computed_at)
          VALUES ('${day}', 'nobody', 'nowhere', 'postgres', '', 'completed', 1000, now64(3))`,
      );
      await write(
        `INSERT INTO session_technology_rollups_daily (day, resource_technology, sessions, computed_at)
          VALUES ('${day}', 'rdp', 1000, now64(3))`,
      );
      expect((await panelRows(panel, short)).rows).toEqual(before.rows);
      expect(Number((await panelRows(panel, beyond)).rows[0]?.[0])).toBe(
        Number(beforeLong.rows[0]?.[0]) + 1000,
      );
    });
  });
});
