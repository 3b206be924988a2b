// Variable values that SQL quoting gets wrong: a backslash (Grafana's singlequote format
// escapes quotes only, and ClickHouse reads `\` as an escape inside '…'), a quote, a trailing
// backslash and non-ASCII letters. Every query variable offers the URL-encoded value
// (encodeURLComponent: letters, digits and `-._~%` only, nothing any format escapes) with the
// value itself as its text, and every filter decodes it (decodeURLComponent) in ClickHouse.
// Here every dashboard runs against rows holding such values, through the plugin's expansion
// (grafana-sql.ts), and each choice must return exactly what the same panel returns with the
// chosen texts bound as a query parameter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { NOON } from "../../helpers/simulator.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import {
  loadDashboards,
  queryVariables,
  variableReferences,
  type Dashboard,
  type Panel,
} from "../../helpers/dashboards.js";
import type { TemplateVariable, TimeRange } from "../../helpers/grafana-sql.js";
import {
  panelSql,
  resolveVariables,
  runPanel,
  useDatabase,
  type Result,
} from "../../helpers/panels.js";

/** The values a filter must match exactly. */
const VALUES = ["CORP\\alice", "o'brien", "x\\", "ünï"];
/** The value chosen alone (see the cases below). */
const LONE = "x\\";
/** Near misses a filter must not match. */
const DECOYS = [
  "CORP\\\\alice",
  "CORPalice",
  "o\\'brien",
  "obrien",
  "x",
  "uni",
];
const ALL_STRINGS = [...VALUES, ...DECOYS];

const MINUTE = 60_000;
const RANGE: TimeRange = { fromMs: NOON - 120 * MINUTE, toMs: NOON };
const at = (i: number) =>
  new Date(NOON - 60 * MINUTE + i * MINUTE).toISOString();
/** DateTime64 text in JSONEachRow input. */
const ts = (iso: string) => iso.replace("T", " ").replace("Z", "");

const dashboards = loadDashboards();
let w: Warehouse;

async function insert(table: string, values: Record<string, unknown>[]) {
  await w.client.insert({ table, values, format: "JSONEachRow" });
}

beforeAll(async () => {
  w = await migratedWarehouse(await testConfig());
  await useDatabase(w);
  const now = ts(new Date().toISOString());
  const bucket = (i: number) => ts(at(i)).slice(0, 19);
  await insert(
    "sessions",
    ALL_STRINGS.flatMap((s, i) =>
      ["a", "b"].map((kind) => ({
        id: `q-${i}-${kind}`,
        start_time: ts(at(i)),
        end_time: ts(at(i + 1)),
        duration_ms: (i + 1) * 1000,
        session_status: "closed",
        client_ip_address: s,
        user_type: "human",
        user_username: s,
        user_email: s,
        user_groups: [s],
        end_user_email: s,
        native_username: s,
        resource_name: s,
        // One session in the value's technology, one MCP session (the AI dashboard's).
        resource_technology: kind === "a" ? s : "mcp",
        connector_name: s,
        parent_session_id: kind === "b" ? `q-${i}-a` : "",
        fetched_at: now,
        version: 1,
      })),
    ),
  );
  const histogram = (job: string, i: number, keys: string[]) =>
    [0, 1, 2].map((level) => ({
      job,
      bucket_time: bucket(i),
      interval_s: 60,
      level,
      field1: level >= 1 ? "k1" : "",
      key1: level >= 1 ? (keys[0] ?? "") : "",
      field2: level >= 2 ? "k2" : "",
      key2: level >= 2 ? (keys[1] ?? "") : "",
      count: i + 1,
      window_start: bucket(0),
      fetched_at: now,
    }));
  await insert(
    "agg_histogram",
    ALL_STRINGS.flatMap((s, i) => [
      ...histogram("resource_environments", i, [s, s]),
      ...histogram("policies_by_name_status", i, [s, s]),
      ...histogram("data_labels_by_resource", i, [s, s]),
      ...histogram("llm_by_provider_model", i, [s, `model-${i}`]),
    ]),
  );
  await insert(
    "runs",
    ALL_STRINGS.map((s, i) => ({
      run_id: `run-${i}`,
      job: s,
      started_at: ts(at(i)),
      finished_at: ts(at(i + 1)),
      status: "succeeded",
      pages: 1,
      rows_inserted: i + 1,
      dead_letters: 1,
      retries: i,
      error: "",
      updated_at: now,
    })),
  );
  await insert(
    "dead_letters",
    ALL_STRINGS.map((s, i) => ({
      job: s,
      record_hash: `h${i}`,
      record_id: `r${i}`,
      reason: "bad record",
      raw: "{}",
      seen_at: ts(at(i)),
      run_id: `run-${i}`,
    })),
  );
  await insert(
    "checkpoints",
    ALL_STRINGS.map((s, i) => ({
      stream: `aggregations.${s}`,
      position: ts(at(i)),
      detail: "",
      updated_at: now,
    })),
  );
  await insert(
    "agg_jobs",
    ALL_STRINGS.map((s) => ({
      job: s,
      query: "",
      interval_s: 60,
      window_ms: 3_600_000,
      group_by: [],
      recorded_at: now,
    })),
  );
  await insert(
    "stream_windows",
    ALL_STRINGS.map((s, i) => ({
      job: s,
      window_start: bucket(0),
      window_end: bucket(60),
      state: "pending",
      attempts: i + 1,
      last_error: "",
      skipped_by: "",
      skip_reason: "",
      run_id: `run-${i}`,
      updated_at: now,
    })),
  );
  // The Detections dashboard's filters: a hit per rule and severity.
  await insert(
    "detection_hits",
    ALL_STRINGS.map((s, i) => ({
      rule_id: s,
      hit_key: `q-${i}-a`,
      title: s,
      severity: s,
      attack: ["T1078"],
      tags: [s],
      session_id: `q-${i}-a`,
      session_ids: [`q-${i}-a`],
      event_time: ts(at(i)),
      arrived_at: ts(at(i)),
      detected_at: ts(at(i)),
      fields: { user: s },
    })),
  );
  // The entity streams' filters: a suspension per policy id, a labelled column per label.
  await insert(
    "policy_suspensions",
    ALL_STRINGS.map((s, i) => ({
      id: `sus-${i}`,
      policy_id: s,
      identity_type: "user",
      identity_id: s,
      created_by: s,
      request_id: `req-${i}`,
      suspension_type: "temporary",
      expire_at: ts(at(i + 30)),
      created_at: ts(at(i)),
      updated_at: ts(at(i)),
      content_hash: `h${i}`,
      observed_at: now,
      raw: "{}",
    })),
  );
  const column = (s: string, i: number) => ({
    id: `col-${i}`,
    kind: "column",
    resource_id: `res-${i}`,
    resource_name: s,
    path: `db.public.t.${i}`,
    name: `c${i}`,
    data_label: s,
    data_labels: [s],
    created_at: ts(at(i)),
    updated_at: ts(at(i)),
    content_hash: `h${i}`,
    raw: "{}",
    observed_at: now,
    is_deleted: 0,
    version: 1,
  });
  await insert("inventory_columns", ALL_STRINGS.map(column));
  await insert(
    "inventory_columns_history",
    ALL_STRINGS.flatMap((s, i) => [
      {
        ...column("before", i),
        valid_from: ts(at(0)),
        valid_to: ts(at(i + 1)),
        data_labels: ["before"],
        version: 2,
      },
      { ...column(s, i), valid_from: ts(at(i + 1)), valid_to: null },
    ]),
  );
}, 120_000);

afterAll(async () => {
  await w.close();
});

/** The panel with `name`'s decoding replaced by the texts bound as a query parameter. */
function boundPanel(panel: Panel, name: string): Panel {
  const fromOptions = `decodeURLComponent(arrayJoin([\${${name}:singlequote}]))`;
  const fromArray = `arrayMap(v -> decodeURLComponent(v), [\${${name}:singlequote}])`;
  return {
    ...panel,
    targets: panel.targets.map((t) => {
      const rawSql = t.rawSql
        .replaceAll(fromOptions, "arrayJoin({chosen:Array(String)})")
        .replaceAll(fromArray, "{chosen:Array(String)}");
      expect(
        rawSql,
        `${panel.title}: ${name} outside the decoding`,
      ).not.toMatch(new RegExp(`\\$\\{${name}:`));
      return { ...t, rawSql };
    }),
  };
}

async function runBound(
  panel: Panel,
  variables: readonly TemplateVariable[],
  chosen: string[],
): Promise<Result[]> {
  const out: Result[] = [];
  for (const sql of panelSql(panel, RANGE, variables)) {
    const rs = await w.client.query({
      query: sql,
      query_params: { chosen },
      format: "JSONCompact",
    });
    const body = await rs.json<unknown[]>();
    out.push({ columns: body.meta ?? [], rows: body.data });
  }
  return out;
}

/** Rows to compare: a panel reading now() is compared on its first column only. */
const comparable = (panel: Panel, r: Result | undefined) =>
  panel.targets.some((t) => t.rawSql.includes("now64("))
    ? r?.rows.map((row) => row.slice(0, 1))
    : r?.rows;

/**
 * Each dashboard's variables with nothing chosen, resolved once: every case of a dashboard
 * starts from them, and no test changes a row after beforeAll.
 */
const unchosen = new Map<string, ReturnType<typeof resolveVariables>>();
function resolvedUnchosen(
  dashboard: Dashboard,
): ReturnType<typeof resolveVariables> {
  let r = unchosen.get(dashboard.uid);
  if (!r) {
    r = resolveVariables(w, dashboard, { range: RANGE });
    unchosen.set(dashboard.uid, r);
  }
  return r;
}

const cases = dashboards.flatMap(({ dashboard }) =>
  queryVariables(dashboard).map(
    (v) => [dashboard.title, v.name, dashboard] as const,
  ),
);

describe.each(cases)(
  "%s: variable %s",
  (_title, name, dashboard: Dashboard) => {
    it("offers every value as its text, under a value that needs no escaping", async () => {
      const { variables, texts } = await resolvedUnchosen(dashboard);
      const options = variables.find((v) => v.name === name)?.options ?? [];
      const shown = texts.get(name) ?? [];
      expect(shown).toEqual(expect.arrayContaining(VALUES));
      for (const [i, value] of options.entries()) {
        expect(value).toMatch(/^[A-Za-z0-9%._~-]*$/);
        expect(decodeURIComponent(value)).toBe(shown[i]);
      }
    });

    // Two choices per variable: every value at once (each value's decoding, every decoy left
    // out, the multi-value expansion) and one value alone (the one-value expansion). A value's
    // filter is the same decodeURLComponent of the same encoded option whether it is chosen
    // alone or with the others, so each other value alone proved nothing the first choice does
    // not. The value alone is the trailing backslash, the one that, inserted unencoded into a
    // one-element list, would escape the list's closing quote.
    it.each([[LONE], VALUES])(
      "matches exactly %j in every panel that filters by it",
      async (...picked: string[]) => {
        const { variables: all, texts } = await resolvedUnchosen(dashboard);
        const v = all.find((x) => x.name === name);
        const shown = texts.get(name) ?? [];
        const values = picked.map((p) => v?.options[shown.indexOf(p)] ?? "");
        expect(values.every((x) => x !== "")).toBe(true);
        const { variables } = await resolveVariables(w, dashboard, {
          range: RANGE,
          chosen: new Map([[name, values]]),
        });
        const users = dashboard.panels.filter((p) =>
          p.targets.some((t) => variableReferences(t.rawSql).includes(name)),
        );
        let withRows = 0;
        for (const panel of users) {
          for (const sql of panelSql(panel, RANGE, variables))
            for (const p of picked.filter((x) => /['\\]/.test(x)))
              expect(sql, "the raw value reaches the SQL").not.toContain(p);
          const got = await runPanel(w, dashboard, panel, RANGE, variables);
          const bound = await runBound(
            boundPanel(panel, name),
            variables,
            picked,
          );
          for (const [i, result] of got.entries())
            expect(comparable(panel, result), panel.title).toEqual(
              comparable(panel, bound[i]),
            );
          if (got.every((r) => r.rows.length > 0)) withRows++;
        }
        if (users.length > 0) expect(withRows).toBeGreaterThan(0);
      },
    );
  },
);
