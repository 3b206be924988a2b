// Running the dashboards' SQL the way Grafana would: variables resolved in order, each panel's
// targets expanded (grafana-sql.ts) and run against a warehouse. Shared by the query tests.
import type { Warehouse } from "../../src/warehouse/client.js";
import { quoteIdent } from "../../src/warehouse/sql.js";
import { NOON } from "./simulator.js";
import { TEXTBOX_SAMPLES, type Dashboard, type Panel } from "./dashboards.js";
import { DAY_MS, DEMO_DAYS } from "./demo-fixture.js";
import {
  ALL,
  queryInterval,
  renderQuery,
  type TemplateVariable,
  type TimeRange,
} from "./grafana-sql.js";

export interface Result {
  columns: { name: string; type: string }[];
  rows: unknown[][];
}

/**
 * Grafana's data source names the database (jsonData.defaultDatabase) and the dashboards' SQL
 * leaves tables unqualified; the embedded engine keeps a session, a server client has the
 * database set already.
 */
export async function useDatabase(w: Warehouse): Promise<void> {
  if (w.kind === "embedded")
    await w.client.command({ query: `USE ${quoteIdent(w.database)}` });
}

export async function run(w: Warehouse, sql: string): Promise<Result> {
  const rs = await w.client.query({ query: sql, format: "JSONCompact" });
  const body = await rs.json<unknown[]>();
  return { columns: body.meta ?? [], rows: body.data };
}

/**
 * The time range a dashboard is looked at with: the synced demo days for the data, and the
 * last days of the wall clock for the exporter's own bookkeeping (its runs happened just now).
 */
export function demoRange(d: Dashboard): TimeRange {
  if (d.uid === "sessionhouse-exporter-health")
    return {
      fromMs: Date.now() - DEMO_DAYS * DAY_MS,
      toMs: Date.now() + 60_000,
    };
  return { fromMs: NOON - DEMO_DAYS * DAY_MS, toMs: NOON };
}

export interface VariableChoice {
  range: TimeRange;
  /** Values picked per variable; All for the others. */
  chosen?: ReadonlyMap<string, string[]>;
}

/**
 * The variables as Grafana resolves them on load: in order, each query run with the variables
 * before it, All selected unless `chosen` picks values. Returns the rows each query gave and,
 * per variable, the options' texts (the second column when a query returns two).
 */
export async function resolveVariables(
  w: Warehouse,
  d: Dashboard,
  { range, chosen = new Map() }: VariableChoice,
): Promise<{
  variables: TemplateVariable[];
  rows: Map<string, number>;
  texts: Map<string, string[]>;
}> {
  const variables: TemplateVariable[] = [];
  const rows = new Map<string, number>();
  const texts = new Map<string, string[]>();
  for (const v of d.templating.list) {
    if (v.type === "textbox" || v.type === "custom") {
      let value = chosen.get(v.name)?.[0] ?? v.current.value;
      if (value === "" && v.type === "textbox") {
        const sample = TEXTBOX_SAMPLES[v.name];
        if (sample === undefined)
          throw new Error(
            `textbox ${v.name}: no sample value (TEXTBOX_SAMPLES)`,
          );
        const first = (await run(w, sample)).rows[0]?.[0];
        value = typeof first === "string" ? first : "";
      }
      rows.set(v.name, value === "" ? 0 : 1);
      texts.set(v.name, [value]);
      variables.push({ name: v.name, current: value, options: [value] });
      continue;
    }
    if (v.type === "constant") {
      // A fixed, hidden value: Grafana inserts it as it is (backend macros in it expand later).
      rows.set(v.name, 1);
      texts.set(v.name, [v.query]);
      variables.push({ name: v.name, current: v.query, options: [v.query] });
      continue;
    }
    if (v.type !== "query") continue;
    const sql = renderQuery(v.query, {
      range,
      intervalMs: queryInterval(range),
      variables,
    });
    const result = await run(w, sql);
    rows.set(v.name, result.rows.length);
    // The plugin's metricFindQuery: one column is text and value; with two, the first is the
    // value and the second the text.
    const options = result.rows.map((r) => String(r[0]));
    texts.set(
      v.name,
      result.rows.map((r) => String(r.length > 1 ? r[1] : r[0])),
    );
    variables.push({
      name: v.name,
      current: chosen.get(v.name) ?? (v.multi ? [ALL] : ALL),
      options,
      allValue: v.allValue,
    });
  }
  return { variables, rows, texts };
}

/** The SQL of every target of a panel, expanded. */
export function panelSql(
  panel: Panel,
  range: TimeRange,
  variables: readonly TemplateVariable[],
): string[] {
  return panel.targets.map((t) =>
    renderQuery(t.rawSql, {
      range,
      intervalMs: queryInterval(range, panel.interval),
      variables,
    }),
  );
}

export async function runPanel(
  w: Warehouse,
  d: Dashboard,
  panel: Panel,
  range: TimeRange,
  variables: readonly TemplateVariable[],
): Promise<Result[]> {
  const results: Result[] = [];
  for (const sql of panelSql(panel, range, variables)) {
    try {
      results.push(await run(w, sql));
    } catch (err) {
      throw new Error(
        `${d.title} / ${panel.title}: ${(err as Error).message}\n${sql}`,
        { cause: err },
      );
    }
  }
  return results;
}
