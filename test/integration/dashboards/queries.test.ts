// Every panel's query and every variable's query, expanded as Grafana and the plugin expand
// them (grafana-sql.ts), runs against a migrated ClickHouse filled by a simulator sync and
// returns rows for the demo data: a panel that can only ever be empty is a defect.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  loadDashboards,
  variableReferences,
} from "../../helpers/dashboards.js";
import {
  DAY_MS,
  DEMO_DAYS,
  HISTORY_DAYS,
  demoWarehouse,
  type DemoWarehouse,
} from "../../helpers/demo-fixture.js";
import {
  demoRange,
  resolveVariables as resolveWith,
  run,
  runPanel as runWith,
  useDatabase,
} from "../../helpers/panels.js";
import { NOON } from "../../helpers/simulator.js";
import { REPLACED_PANELS } from "../../helpers/replaced-panels.js";
import type { Dashboard, Panel } from "../../helpers/dashboards.js";
import {
  adHocTargetTable,
  queryInterval,
  renderQuery,
  type TemplateVariable,
  type TimeRange,
} from "../../helpers/grafana-sql.js";

const dashboards = loadDashboards();
let demo: DemoWarehouse;

beforeAll(async () => {
  demo = await demoWarehouse();
  await useDatabase(demo.warehouse);
}, 120_000);

afterAll(async () => {
  await demo.close();
});

const resolveVariables = (
  d: Dashboard,
  chosen: ReadonlyMap<string, string[]> = new Map(),
) => resolveWith(demo.warehouse, d, { range: demoRange(d), chosen });

const runPanel = (d: Dashboard, panel: Panel, variables: TemplateVariable[]) =>
  runWith(demo.warehouse, d, panel, demoRange(d), variables);

/**
 * Each dashboard's variables with All selected, resolved once for the cases of its own describe
 * below, which change no row (the later describes insert rows, and resolve again).
 */
const allSelected = new Map<string, ReturnType<typeof resolveVariables>>();
function resolvedAll(d: Dashboard): ReturnType<typeof resolveVariables> {
  let r = allSelected.get(d.uid);
  if (!r) {
    r = resolveVariables(d);
    allSelected.set(d.uid, r);
  }
  return r;
}

describe.each(dashboards)("$file", ({ dashboard }) => {
  it("offers options in every variable", async () => {
    const { variables, rows } = await resolvedAll(dashboard);
    for (const v of variables) {
      expect(rows.get(v.name), `variable ${v.name}`).toBeGreaterThan(0);
      expect(
        v.options.every((o) => o !== ""),
        `variable ${v.name} offers an empty option`,
      ).toBe(true);
    }
  });

  it.each(dashboard.panels.map((p) => [p.title, p] as const))(
    "panel %s returns rows with All selected",
    async (_title, panel) => {
      const { variables } = await resolvedAll(dashboard);
      for (const [i, result] of (
        await runPanel(dashboard, panel, variables)
      ).entries()) {
        expect(
          result.rows.length,
          `target ${panel.targets[i]?.refId}`,
        ).toBeGreaterThan(0);
        if (panel.targets[i]?.queryType === "timeseries") {
          // The plugin's time series need a DateTime column named time, in ascending order.
          expect(result.columns[0]?.name).toBe("time");
          expect(result.columns[0]?.type).toMatch(/^DateTime/);
          const times = result.rows.map((r) => String(r[0]));
          expect(times).toEqual([...times].sort());
        }
      }
    },
  );

  it("filters by each variable: two chosen options still run everywhere and show rows somewhere", async () => {
    const all = await resolvedAll(dashboard);
    for (const v of all.variables) {
      const picked = v.options.slice(0, 2);
      const { variables } = await resolveVariables(
        dashboard,
        new Map([[v.name, picked]]),
      );
      const users = dashboard.panels.filter((p) =>
        p.targets.some((t) => variableReferences(t.rawSql).includes(v.name)),
      );
      let withRows = 0;
      for (const panel of users) {
        const results = await runPanel(dashboard, panel, variables);
        if (results.every((r) => r.rows.length > 0)) withRows++;
      }
      if (users.length > 0)
        expect(
          withRows,
          `panels with rows when ${v.name} = ${picked.join(", ")}`,
        ).toBeGreaterThan(0);
    }
  });
});

// Top values are stored per fetched window (agg_top_values.window_start … window_end, an hour
// for the default jobs), so a panel reads every window that overlaps the time range: a range
// shorter than a window, or one that starts inside a window, still finds the windows it touches.
describe("top-value panels", () => {
  const OVERLAP = "window_end > $__fromTime AND window_start < $__toTime";
  const MINUTE = 60_000;
  const ranges: [string, TimeRange][] = [
    [
      "the last 15 minutes of a window",
      {
        fromMs: NOON - 3 * 60 * MINUTE - 15 * MINUTE,
        toMs: NOON - 3 * 60 * MINUTE,
      },
    ],
    [
      "a range starting and ending inside windows",
      {
        fromMs: NOON - 5 * 60 * MINUTE - 20 * MINUTE,
        toMs: NOON - 2 * 60 * MINUTE - 40 * MINUTE,
      },
    ],
  ];
  const panels = dashboards.flatMap(({ dashboard }) =>
    dashboard.panels
      .filter((p) => p.targets.some((t) => t.rawSql.includes("agg_top_values")))
      .map((p) => [`${dashboard.title} / ${p.title}`, dashboard, p] as const),
  );

  it("exist, and select windows by overlap with the time range", () => {
    expect(panels.length).toBeGreaterThan(0);
    for (const [, , panel] of panels)
      for (const t of panel.targets) expect(t.rawSql).toContain(OVERLAP);
  });

  it.each(panels)(
    "%s: returns what a direct query of the overlapping windows returns",
    async (_name, dashboard, panel) => {
      const windows = await run(
        demo.warehouse,
        `SELECT DISTINCT toUnixTimestamp(window_start) * 1000, toUnixTimestamp(window_end) * 1000
         FROM agg_top_values FINAL`,
      );
      const { variables } = await resolveVariables(dashboard);
      for (const [what, range] of ranges) {
        const overlapping = [
          ...new Set(
            windows.rows
              .map(([start, end]) => [Number(start), Number(end)] as const)
              .filter(
                ([start, end]) => end > range.fromMs && start < range.toMs,
              )
              .map(([start]) => start / 1000),
          ),
        ];
        expect(overlapping.length, what).toBeGreaterThan(0);
        const got = await runWith(
          demo.warehouse,
          dashboard,
          panel,
          range,
          variables,
        );
        const direct = await runWith(
          demo.warehouse,
          dashboard,
          {
            ...panel,
            targets: panel.targets.map((t) => ({
              ...t,
              rawSql: t.rawSql.replace(
                OVERLAP,
                `window_start IN (${overlapping.map((s) => `toDateTime(${s})`).join(", ")})`,
              ),
            })),
          },
          range,
          variables,
        );
        for (const [i, result] of got.entries()) {
          expect(result.rows.length, what).toBeGreaterThan(0);
          expect(result.rows, what).toEqual(direct[i]?.rows);
        }
      }
    },
  );
});

// "Open sessions now" reads a bounded slice of the sessions table: those that started in the
// 7 days up to the end of the range, still active or idle, and not vanished.
describe("open sessions now", () => {
  const HOUR = 3_600_000;
  const found = dashboards
    .map(({ dashboard }) => ({
      dashboard,
      panel: dashboard.panels.find((p) => p.title === "Open sessions now"),
    }))
    .find((x) => x.panel !== undefined);

  it("counts open sessions of the last 7 days before the range's end, without vanished ones", async () => {
    const { dashboard, panel } = found ?? {};
    if (!dashboard || !panel) throw new Error("no Open sessions now panel");
    const range = demoRange(dashboard);
    const { variables } = await resolveVariables(dashboard);
    const counts = async () => {
      const [result] = await runWith(
        demo.warehouse,
        dashboard,
        panel,
        range,
        variables,
      );
      const [active, idle] = (result?.rows[0] ?? []).map(Number);
      return { active, idle };
    };
    const before = await counts();
    const at = (ms: number) => `fromUnixTimestamp64Milli(${ms})`;
    await demo.warehouse.client.command({
      query: `INSERT INTO sessions (id, start_time, session_status, fetched_at, version) VALUES
        ('open-test-counted', ${at(range.toMs - 2 * HOUR)}, 'active', now64(3), 1),
        ('open-test-too-old', ${at(range.toMs - 7 * 24 * HOUR - HOUR)}, 'active', now64(3), 1),
        ('open-test-after-range', ${at(range.toMs + HOUR)}, 'idle', now64(3), 1),
        ('open-test-vanished', ${at(range.toMs - 3 * HOUR)}, 'idle', now64(3), 1)`,
    });
    await demo.warehouse.client.command({
      query: `INSERT INTO session_polls (session_id, misses, vanished, last_polled_at, updated_at)
              VALUES ('open-test-vanished', 3, true, now64(3), now64(3))`,
    });
    expect(await counts()).toEqual({
      active: (before.active ?? 0) + 1,
      idle: before.idle,
    });
  });
});

// Session detail reads one session by the id typed into its textbox (or carried by a link).
describe("session detail", () => {
  const found = dashboards.find(
    (d) => d.dashboard.uid === "sessionhouse-session-detail",
  )?.dashboard;
  const panel = (title: string) => {
    const p = found?.panels.find((x) => x.title === title);
    if (!found || !p) throw new Error(`no Session detail / ${title}`);
    return { d: found, p };
  };
  const show = async (title: string, sessionId?: string) => {
    const { d, p } = panel(title);
    const chosen = new Map(
      sessionId === undefined ? [] : [["session_id", [sessionId]]],
    );
    const { variables } = await resolveVariables(d, chosen);
    const [result] = await runPanel(d, p, variables);
    const names = result?.columns.map((c) => c.name) ?? [];
    return (result?.rows ?? []).map((r) =>
      Object.fromEntries(names.map((n, i) => [n, r[i]])),
    );
  };

  it("shows the session, its parent and its children", async () => {
    const [family] = await show("Parent and children");
    const id = String(family?.session_id);
    const rows = await show("Parent and children", id);
    const children = await run(
      demo.warehouse,
      `SELECT id FROM sessions FINAL WHERE parent_session_id = '${id}' ORDER BY id`,
    );
    expect(rows.filter((r) => r.relation === "this session")).toHaveLength(1);
    expect(
      rows
        .filter((r) => r.relation === "child")
        .map((r) => r.session_id)
        .sort(),
    ).toEqual(children.rows.map((r) => r[0]));
    expect(children.rows.length).toBeGreaterThan(0);
    const child = String(children.rows[0]?.[0]);
    const fromChild = await show("Parent and children", child);
    expect(
      fromChild.filter((r) => r.relation === "parent").map((r) => r.session_id),
    ).toEqual([id]);
  });

  it("names the person behind the session, as sessions_enriched finds them", async () => {
    const [family] = await show("Parent and children");
    const id = String(family?.session_id);
    const [person] = await show("The person behind it", id);
    const direct = await run(
      demo.warehouse,
      `SELECT if(end_user_id != '', end_user_name, user_name), user_key FROM sessions FINAL WHERE id = '${id}'`,
    );
    expect(person?.person_via).toBe("brand");
    expect(person?.person_name).toBe(direct.rows[0]?.[0]);
    expect(person?.user).toBe(direct.rows[0]?.[1]);
  });

  it("lists every read of the session while Session shows the latest, for any typed id", async () => {
    // An id with a quote and a backslash: the textbox value reaches SQL percent-encoded.
    const id = "ses_o'brien\\reads";
    const at = (ms: number) => `fromUnixTimestamp64Milli(${ms})`;
    // Two reads, stored by two inserts as the exporter stores them (an insert keeps one row per
    // key), each under its own deduplication token: the embedded session keeps the last one set.
    for (const [status, fetchedMs, version] of [
      ["active", NOON - 3_000_000, 1],
      ["completed", NOON - 1_000_000, 2],
    ] as const)
      await demo.warehouse.client.command({
        query: `INSERT INTO sessions (id, start_time, session_status, fetched_at, version, raw)
          SETTINGS insert_deduplication_token = 'session-detail-read-${version}' VALUES
          ('ses_o\\'brien\\\\reads', ${at(NOON - 3_600_000)}, '${status}', ${at(fetchedMs)}, ${version}, '{"sessionStatus":"${status}"}')`,
      });
    const reads = await show("Reads over time", id);
    expect(reads.map((r) => r.session_status)).toEqual(["active", "completed"]);
    const fields = await show("Session", id);
    expect(fields.find((f) => f.field === "id")?.value).toBe(id);
    expect(fields.find((f) => f.field === "session_status")?.value).toBe(
      "completed",
    );
    const raw = await show("Raw record", id);
    expect(raw).toEqual([{ member: "sessionStatus", value: '"completed"' }]);
  });
});

// First seen and unusual, against the demo days and the history HISTORY_DAYS before them.
describe("first seen and unusual", () => {
  const d = dashboards.find(
    (x) => x.dashboard.uid === "sessionhouse-first-seen",
  )?.dashboard;
  const show = async (title: string, chosen: [string, string][] = []) => {
    const p = d?.panels.find((x) => x.title === title);
    if (!d || !p) throw new Error(`no First seen / ${title}`);
    const { variables } = await resolveVariables(
      d,
      new Map(chosen.map(([k, v]) => [k, [v]])),
    );
    const [result] = await runPanel(d, p, variables);
    const names = result?.columns.map((c) => c.name) ?? [];
    return (result?.rows ?? []).map((r) =>
      Object.fromEntries(names.map((n, i) => [n, r[i]])),
    );
  };
  const from = `fromUnixTimestamp64Milli(${NOON - DEMO_DAYS * DAY_MS})`;

  it("lists a user → resource pair only when the user never reached the resource before the range", async () => {
    const rows = await show("New user → resource pairs");
    expect(rows.length).toBeGreaterThan(0);
    const before = await run(
      demo.warehouse,
      `SELECT DISTINCT user_key, toString(resource_name) FROM sessions WHERE start_time < ${from}`,
    );
    const seen = new Set(
      before.rows.map(([u, r]) => `${String(u)} ${String(r)}`),
    );
    expect(seen.size).toBeGreaterThan(0);
    for (const r of rows)
      expect(seen.has(`${String(r.user)} ${String(r.resource)}`)).toBe(false);
    const inRange = await run(
      demo.warehouse,
      `SELECT count() FROM (SELECT DISTINCT user_key, resource_name FROM sessions WHERE start_time >= ${from})`,
    );
    // The history repeats the first demo day: pairs of that day are not new.
    expect(rows.length).toBeLessThan(Number(inRange.rows[0]?.[0]));
  });

  it("finds accounts back after the chosen number of days, and none for more days than the history lies back", async () => {
    const rows = await show("Accounts active again after a quiet spell");
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(Number(r.days_inactive)).toBeGreaterThanOrEqual(30);
      expect(Date.parse(`${String(r.back_at)}Z`)).toBeGreaterThanOrEqual(
        NOON - DEMO_DAYS * DAY_MS,
      );
    }
    expect(
      await show("Accounts active again after a quiet spell", [
        ["inactive_days", String(HISTORY_DAYS + 7)],
      ]),
    ).toEqual([]);
  });

  it("counts weekends outside working hours, whatever the hours", async () => {
    const rows = await show("Sessions outside working hours", [
      ["work_start", "0"],
      ["work_end", "24"],
    ]);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.why))).toEqual(new Set(["weekend"]));
    const hours = await show("Sessions outside working hours");
    expect(hours.length).toBeGreaterThan(rows.length);
  });

  it("finds machine accounts at addresses humans used", async () => {
    const rows = await show("Machine accounts used by humans");
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const [[machine, humans] = []] = (
        await run(
          demo.warehouse,
          `SELECT countIf(user_key = '${String(r.user)}' AND user_type = 'machine'), countIf(user_type = 'human')
           FROM sessions WHERE start_time >= ${from} AND client_ip_address = '${String(r.client_ip_address)}'`,
        )
      ).rows;
      expect(Number(machine)).toBe(Number(r.sessions));
      expect(Number(humans)).toBeGreaterThan(0);
    }
  });
});

// Ad hoc filters: the plugin appends them to every query that reads the table of the dashboard's
// clickhouse_adhoc_query. A filter on resource_technology must show what the Technology variable
// shows, in every panel that honours that variable.
describe("ad hoc filters", () => {
  const withAdHoc = dashboards.filter(({ dashboard }) =>
    dashboard.templating.list.some((v) => v.type === "adhoc"),
  );

  it("are offered on the sessions dashboards, on the sessions table", () => {
    expect(withAdHoc.map((d) => d.dashboard.uid).sort()).toEqual([
      "sessionhouse-sessions-overview",
      "sessionhouse-who-accessed-what",
    ]);
    for (const { dashboard } of withAdHoc) {
      const source = dashboard.templating.list.find(
        (v) => v.name === "clickhouse_adhoc_query",
      );
      expect(source?.type).toBe("constant");
      expect(adHocTargetTable(String(source?.query))).toBe("sessions");
    }
  });

  it.each(withAdHoc.map((d) => [d.file, d.dashboard] as const))(
    "%s: a filter on resource_technology shows what the Technology variable shows",
    async (_file, dashboard) => {
      const source = dashboard.templating.list.find(
        (v) => v.name === "clickhouse_adhoc_query",
      );
      // The keys query runs as the plugin runs it (it reads the wall clock's last day).
      const keys = await run(demo.warehouse, String(source?.query));
      expect(keys.columns.map((c) => c.name)).toContain("resource_technology");
      const all = await resolveVariables(dashboard);
      const value = all.variables.find((v) => v.name === "technology")
        ?.options[0];
      const text = all.texts.get("technology")?.[0];
      expect(value).toBeDefined();
      const chosen = await resolveVariables(
        dashboard,
        new Map([["technology", [value ?? ""]]]),
      );
      const range = demoRange(dashboard);
      const sorted = (rows: unknown[][]) =>
        rows.map((r) => JSON.stringify(r)).sort();
      let compared = 0;
      for (const panel of dashboard.panels) {
        const sql = panel.targets.map((t) => t.rawSql).join("\n");
        if (!variableReferences(sql).includes("technology")) continue;
        for (const t of panel.targets) {
          const byVariable = renderQuery(t.rawSql, {
            range,
            intervalMs: queryInterval(range, panel.interval),
            variables: chosen.variables,
          });
          const byAdHoc = renderQuery(t.rawSql, {
            range,
            intervalMs: queryInterval(range, panel.interval),
            variables: all.variables,
            adHoc: {
              filters: [
                {
                  key: "resource_technology",
                  operator: "=",
                  value: text ?? "",
                },
              ],
              targetTable: "sessions",
            },
          });
          expect(byAdHoc).toContain("settings additional_table_filters=");
          const a = await run(demo.warehouse, byVariable);
          const b = await run(demo.warehouse, byAdHoc);
          expect(a.rows.length, panel.title).toBeGreaterThan(0);
          expect(sorted(b.rows), panel.title).toEqual(sorted(a.rows));
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(3);
    },
  );
});

// A panel rewritten to read less answers what the query it replaced answered: the old SQL, kept
// in test/helpers/replaced-panels.ts, runs through the same expansion on the same data.
describe("rewritten panels", () => {
  it.each(REPLACED_PANELS.map((c) => [c.title, c] as const))(
    "%s: the rows of the query it replaced, with All and with one option picked",
    async (_title, c) => {
      const d = dashboards.find((x) => x.dashboard.uid === c.uid)?.dashboard;
      const panel = d?.panels.find((p) => p.title === c.title);
      if (!d || !panel) throw new Error(`no ${c.uid} / ${c.title}`);
      const all = await resolveVariables(d);
      const option = all.variables.find((v) => v.name === c.picks)?.options[0];
      expect(option).toBeDefined();
      const range = demoRange(d);
      const sql = (raw: string, variables: TemplateVariable[], cap: string) =>
        renderQuery(raw.replaceAll("LIMIT 1000", `LIMIT ${cap}`), {
          range,
          intervalMs: queryInterval(range, panel.interval),
          variables,
        });
      for (const chosen of [
        new Map<string, string[]>(),
        new Map([[c.picks, [option ?? ""]]]),
      ])
        // At the panel's cap, and at a cap of 3 that cuts the demo data's rows.
        for (const cap of ["1000", "3"]) {
          const { variables } = await resolveVariables(d, chosen);
          const what = `${JSON.stringify([...chosen])} LIMIT ${cap}`;
          const want = await run(demo.warehouse, sql(c.sql, variables, cap));
          expect(want.rows.length, what).toBeGreaterThan(0);
          for (const t of panel.targets)
            expect(
              (await run(demo.warehouse, sql(t.rawSql, variables, cap))).rows,
              what,
            ).toEqual(want.rows);
        }
    },
  );
});
