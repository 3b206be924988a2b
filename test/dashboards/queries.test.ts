// Every panel's query and every variable's query, expanded as Grafana and the plugin expand
// them (grafana-sql.ts), runs against a migrated ClickHouse filled by a simulator sync and
// returns rows for the demo data: a panel that can only ever be empty is a defect.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOON } from "../helpers/simulator.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import { quoteIdent } from "../../src/warehouse/client.js";
import {
  loadDashboards,
  variableReferences,
  type Dashboard,
  type Panel,
} from "./dashboards.js";
import {
  DAY_MS,
  DEMO_DAYS,
  demoWarehouse,
  type DemoWarehouse,
} from "./fixture.js";
import {
  ALL,
  queryInterval,
  renderQuery,
  type TemplateVariable,
  type TimeRange,
} from "./grafana-sql.js";

const dashboards = loadDashboards();
let demo: DemoWarehouse;

beforeAll(async () => {
  demo = await demoWarehouse();
  // Grafana's data source names the database (jsonData.defaultDatabase) and the dashboards'
  // SQL leaves tables unqualified; the embedded engine keeps a session, a server client has
  // the database set already.
  if (demo.warehouse.kind === "embedded")
    await demo.warehouse.client.command({
      query: `USE ${quoteIdent(demo.warehouse.database)}`,
    });
}, 300_000);

afterAll(async () => {
  await demo.close();
});

interface Result {
  columns: { name: string; type: string }[];
  rows: unknown[][];
}

async function run(w: Warehouse, sql: string): Promise<Result> {
  const rs = await w.client.query({ query: sql, format: "JSONCompact" });
  const body = await rs.json<unknown[]>();
  return { columns: body.meta ?? [], rows: body.data };
}

/**
 * The time range a dashboard is looked at with: the synced demo days for the data, and the
 * last days of the wall clock for the exporter's own bookkeeping (its runs happened just now).
 */
function rangeOf(d: Dashboard): TimeRange {
  if (d.uid === "sessionhouse-exporter-health")
    return {
      fromMs: Date.now() - DEMO_DAYS * DAY_MS,
      toMs: Date.now() + 60_000,
    };
  return { fromMs: NOON - DEMO_DAYS * DAY_MS, toMs: NOON };
}

/**
 * The variables as Grafana resolves them on load: in order, each query run with the variables
 * before it, All selected unless `chosen` picks values. Returns the rows each query gave.
 */
async function resolveVariables(
  d: Dashboard,
  chosen: ReadonlyMap<string, string[]> = new Map(),
): Promise<{ variables: TemplateVariable[]; rows: Map<string, number> }> {
  const range = rangeOf(d);
  const variables: TemplateVariable[] = [];
  const rows = new Map<string, number>();
  for (const v of d.templating.list) {
    if (v.type !== "query") continue;
    const sql = renderQuery(v.query, {
      range,
      intervalMs: queryInterval(range),
      variables,
    });
    const result = await run(demo.warehouse, sql);
    rows.set(v.name, result.rows.length);
    // The plugin's metricFindQuery: one column is text and value; with more, the first is the value.
    const options = result.rows.map((r) => String(r[0]));
    variables.push({
      name: v.name,
      current: chosen.get(v.name) ?? (v.multi ? [ALL] : ALL),
      options,
      allValue: v.allValue,
    });
  }
  return { variables, rows };
}

async function runPanel(
  d: Dashboard,
  panel: Panel,
  variables: TemplateVariable[],
): Promise<Result[]> {
  const range = rangeOf(d);
  const results: Result[] = [];
  for (const t of panel.targets) {
    const sql = renderQuery(t.rawSql, {
      range,
      intervalMs: queryInterval(range, panel.interval),
      variables,
    });
    try {
      results.push(await run(demo.warehouse, sql));
    } catch (err) {
      throw new Error(
        `${d.title} / ${panel.title}: ${(err as Error).message}\n${sql}`,
        { cause: err },
      );
    }
  }
  return results;
}

describe.each(dashboards)("$file", ({ dashboard }) => {
  it("offers options in every variable", async () => {
    const { variables, rows } = await resolveVariables(dashboard);
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
      const { variables } = await resolveVariables(dashboard);
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
    const all = await resolveVariables(dashboard);
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
