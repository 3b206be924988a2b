// Every dashboard is valid for Grafana and the ClickHouse plugin (v4 query model) without
// running either: the schema of dashboards.ts, plus what a schema cannot say.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  CONDITIONAL_ALL,
  conditionalAllCalls,
  GRAFANA_BUILTINS,
  PLUGIN_MACROS,
} from "../../helpers/grafana-sql.js";
import {
  DATASOURCE_REF,
  REPO_ROOT,
  dashboardFiles,
  loadDashboards,
  queryVariables,
  valueVariables,
  variableReferences,
  type Panel,
} from "../../helpers/dashboards.js";

const dashboards = loadDashboards();

/**
 * Panels that read a ReplacingMergeTree table without FINAL on purpose ("dashboard uid / panel
 * title" → tables), each for a reason that holds for every row it reads.
 */
const WITHOUT_FINAL: Readonly<Record<string, readonly string[]>> = {
  // Every read of the session, not only the latest, is what the panel shows.
  "sessionhouse-session-detail / Reads over time": ["sessions"],
  // The session an account came back with, and the addresses humans used, are columns every
  // read of a session repeats (user, type, address, start, id).
  "sessionhouse-first-seen / Accounts active again after a quiet spell": [
    "sessions",
  ],
  "sessionhouse-first-seen / Machine accounts used by humans": ["sessions"],
  // The resources of the chosen technologies: columns every read of a session repeats.
  "sessionhouse-first-seen / New user → resource pairs": ["sessions"],
};

/** Every object under `value` with a `datasource` member, with its path. */
function datasourceRefs(
  value: unknown,
  path = "$",
): { path: string; ref: unknown }[] {
  if (Array.isArray(value))
    return value.flatMap((v, i) => datasourceRefs(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  const out: { path: string; ref: unknown }[] = [];
  for (const [k, v] of Object.entries(value)) {
    if (k === "datasource") out.push({ path: `${path}.${k}`, ref: v });
    out.push(...datasourceRefs(v, `${path}.${k}`));
  }
  return out;
}

function overlaps(a: Panel, b: Panel): boolean {
  const [p, q] = [a.gridPos, b.gridPos];
  return (
    p.x < q.x + q.w && q.x < p.x + p.w && p.y < q.y + q.h && q.y < p.y + p.h
  );
}

describe("dashboards", () => {
  it("ship at least the five dashboards of the issue", () => {
    expect(dashboardFiles()).toEqual(
      expect.arrayContaining([
        "ai-and-llm-activity.json",
        "exporter-health.json",
        "policies-and-sensitive-data.json",
        "sessions-overview.json",
        "who-accessed-what.json",
      ]),
    );
  });

  it("have unique uids and titles", () => {
    const uids = dashboards.map((d) => d.dashboard.uid);
    expect(new Set(uids).size).toBe(uids.length);
    const titles = dashboards.map((d) => d.dashboard.title);
    expect(new Set(titles).size).toBe(titles.length);
  });

  describe.each(dashboards)("$file", ({ raw, dashboard }) => {
    it("has panel ids unique within the dashboard and panels that do not overlap", () => {
      const ids = dashboard.panels.map((p) => p.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const [i, a] of dashboard.panels.entries()) {
        for (const b of dashboard.panels.slice(i + 1))
          expect(overlaps(a, b), `${a.title} / ${b.title}`).toBe(false);
      }
    });

    it("chooses the data source through the datasource variable, never a hard-coded uid", () => {
      const ds = dashboard.templating.list.filter(
        (v) => v.type === "datasource",
      );
      expect(ds).toHaveLength(1);
      for (const { path, ref } of datasourceRefs(raw)) {
        // Grafana's built-in annotation query is the one reference to another data source.
        if (path.startsWith("$.annotations.list")) {
          expect(ref, path).toEqual({ type: "grafana", uid: "-- Grafana --" });
          continue;
        }
        expect(ref, path).toEqual(DATASOURCE_REF);
      }
    });

    it("has time series targets only on time series panels, tables elsewhere", () => {
      for (const panel of dashboard.panels) {
        for (const t of panel.targets) {
          expect(t.queryType, panel.title).toBe(
            panel.type === "timeseries" ? "timeseries" : "table",
          );
        }
      }
    });

    it("uses only defined variables, Grafana built-ins and the plugin's macros", () => {
      const defined = new Set(dashboard.templating.list.map((v) => v.name));
      const known = (name: string) =>
        defined.has(name) ||
        GRAFANA_BUILTINS.has(name) ||
        (name.startsWith("__") &&
          (PLUGIN_MACROS.has(name.slice(2)) ||
            name.slice(2) === CONDITIONAL_ALL));
      const queries = [
        ...dashboard.panels.flatMap((p) =>
          p.targets.map((t) => ({ where: p.title, sql: t.rawSql })),
        ),
        ...queryVariables(dashboard).map((v) => ({
          where: `variable ${v.name}`,
          sql: v.query,
        })),
      ];
      for (const { where, sql } of queries) {
        for (const name of variableReferences(sql))
          expect(known(name), `${where}: $${name}`).toBe(true);
      }
    });

    it("has variables that depend only on variables before them", () => {
      const seen = new Set<string>();
      for (const v of dashboard.templating.list) {
        if (v.type === "query") {
          for (const name of variableReferences(v.query).filter(
            (n) => !n.startsWith("__"),
          )) {
            expect(seen.has(name), `${v.name} uses $${name}`).toBe(true);
          }
        }
        seen.add(v.name);
      }
    });

    it("filters with $__conditionalAll on a plain variable, so All costs no IN list", () => {
      const queries = [
        ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.rawSql)),
        ...queryVariables(dashboard).map((v) => v.query),
      ];
      for (const sql of queries) {
        let outside = sql;
        for (const call of conditionalAllCalls(sql)) {
          // The plugin's documentation: the second argument must be `$var` or `${var}`, no format.
          expect(call.variableArg).toMatch(/^\$(\w+|\{\w+\})$/);
          outside = outside.replace(call.full, "");
        }
        // Value variables, and constants (fixed SQL the dashboard defines once, no user input).
        const single = new Set([
          ...valueVariables(dashboard).map((v) => v.name),
          ...dashboard.templating.list
            .filter((v) => v.type === "constant")
            .map((v) => v.name),
        ]);
        const vars = variableReferences(outside).filter(
          (n) => !n.startsWith("__") && n !== "datasource" && !single.has(n),
        );
        expect(vars, sql).toEqual([]);
      }
    });

    it("passes variable values to SQL only URL-encoded, decoded by ClickHouse", () => {
      // Grafana's formats do not escape for ClickHouse (singlequote leaves backslashes as they
      // are), so values must need no escaping: each query variable offers
      // encodeURLComponent(text) as its value (first column) and refuses values it did not offer, and every
      // reference decodes them in the form quoting.test.ts runs with awkward values.
      for (const v of queryVariables(dashboard)) {
        expect(v.query, v.name).toMatch(
          /^SELECT encodeURLComponent\((\w+)\) AS value, (?:\w+(?:\(\w+\))? AS )?\1\b/,
        );
        expect(v.allowCustomValue, v.name).toBe(false);
      }
      const queries = [
        ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.rawSql)),
        ...queryVariables(dashboard).map((v) => v.query),
      ];
      for (const sql of queries) {
        const decoded = sql
          // A typed or fixed-choice value, percent-encoded by Grafana inside a string literal.
          .replace(/'\$\{(\w+):percentencode\}'/g, (m, name: string) =>
            valueVariables(dashboard).some((v) => v.name === name) ? "" : m,
          )
          .replace(
            /IN \(SELECT decodeURLComponent\(arrayJoin\(\[\$\{\w+:singlequote\}\]\)\)\)/g,
            "",
          )
          .replace(
            /arrayMap\(v -> decodeURLComponent\(v\), \[\$\{\w+:singlequote\}\]\)/g,
            "",
          );
        expect(decoded, sql).not.toMatch(/\$\{(?!datasource\b)\w+:/);
      }
    });

    it("reads a text box or fixed-choice variable only percent-encoded inside a string literal", () => {
      const single = valueVariables(dashboard).map((v) => v.name);
      for (const p of dashboard.panels)
        for (const t of p.targets) {
          const rest = t.rawSql.replace(/'\$\{\w+:percentencode\}'/g, "");
          for (const name of variableReferences(rest))
            expect(single.includes(name), `${p.title}: $${name}`).toBe(false);
        }
    });

    it("is not editable in the UI, as the provider saves no UI changes", () => {
      const provider = parse(
        readFileSync(
          join(
            REPO_ROOT,
            "dashboards/provisioning/dashboards/sessionhouse.yaml",
          ),
          "utf8",
        ),
      ) as { providers: { allowUiUpdates: boolean }[] };
      expect(provider.providers[0]?.allowUiUpdates).toBe(false);
      expect((raw as { editable?: unknown }).editable).toBe(false);
    });

    it("says in a panel's description which of the dashboard's filters it ignores", () => {
      const filters = queryVariables(dashboard);
      for (const panel of dashboard.panels) {
        const used = new Set(
          panel.targets.flatMap((t) => variableReferences(t.rawSql)),
        );
        const ignored = filters.filter((v) => !used.has(v.name));
        if (ignored.length === 0) continue;
        const text = (panel.description ?? "").toLowerCase();
        if (text.includes("no filter applies")) continue;
        for (const v of ignored)
          expect(text, `${panel.title} ignores ${v.name}`).toMatch(
            new RegExp(
              `\\b${v.label.toLowerCase()}\\b.*\\bfilters? do(es)? not apply`,
            ),
          );
      }
    });

    it("reads ReplacingMergeTree tables with FINAL where the latest row matters", () => {
      const replacing = [
        "sessions",
        "agg_histogram",
        "agg_top_values",
        "agg_windows",
        "dead_letters",
        // Not checkpoints: a stream's checkpoint is its greatest position (it never moves back),
        // read with max(position), as the exporter reads it; FINAL would keep the latest row.
        "runs",
        "session_polls",
        "stream_windows",
        "agg_jobs",
        "session_rollups_daily",
        "rollup_days",
      ];
      // A variable lists the values of columns every read of a session or a run repeats, so
      // FINAL changes nothing there; aggregation rows need it (a re-fetch writes count 0).
      const sameInEveryRead = ["sessions", "runs"];
      const queries = [
        ...dashboard.panels.flatMap((p) =>
          p.targets.map((t) => ({
            sql: t.rawSql,
            variable: false,
            panel: p.title,
          })),
        ),
        ...queryVariables(dashboard).map((v) => ({
          sql: v.query,
          variable: true,
          panel: "",
        })),
      ];
      for (const { sql, variable, panel } of queries) {
        const exempt = WITHOUT_FINAL[`${dashboard.uid} / ${panel}`];
        for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+(\w+)(\s+FINAL)?/g)) {
          const table = m[1] ?? "";
          if (!replacing.includes(table)) continue;
          if (variable && sameInEveryRead.includes(table)) continue;
          if (exempt?.includes(table)) continue;
          expect(m[2], `${table} in ${sql}`).toBeDefined();
        }
      }
    });

    it("has variables that read at most 1000 options once, when the dashboard opens", () => {
      // refresh 1: on load (and when a variable they depend on changes); 2 would run them on
      // every time range change, which an auto-refreshing relative range is every minute.
      for (const v of queryVariables(dashboard)) {
        expect(v.refresh, v.name).toBe(1);
        expect(v.query, v.name).toMatch(/\nLIMIT 1000$/);
      }
    });
  });
});
