// The shipped dashboards, read from dashboards/*.json and checked against the fields the
// ClickHouse data source plugin (v4 query model) and Grafana's dashboard JSON need.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";

// The benchmark runs a compiled copy of this file from elsewhere and names the root itself.
export const REPO_ROOT =
  process.env.SESSIONHOUSE_REPO_ROOT ?? resolve(import.meta.dirname, "../..");
export const DASHBOARDS_DIR = join(REPO_ROOT, "dashboards");

export const PLUGIN_TYPE = "grafana-clickhouse-datasource";
/** Every panel and target picks the data source through the `datasource` variable. */
export const DATASOURCE_REF = {
  type: PLUGIN_TYPE,
  uid: "${datasource}",
} as const;
/**
 * The most rows a table panel asks for: its outermost query ends in `LIMIT 1000`, and its
 * description says it shows the first 1000 rows (docs/dashboards.md#caps).
 */
export const TABLE_ROW_CAP = 1000;
/** The most options a query variable lists: its query ends in `LIMIT 1000`. */
export const VARIABLE_OPTION_CAP = 1000;
/**
 * The conditions a rollup branch of a panel starts with, true exactly when the time range holds
 * a whole UTC day (month): built of `$__fromTime` and `$__toTime` alone, the engine folds a false
 * one before planning, so a range that cannot hold a rolled-up day (month) reads no rollup and
 * builds none of the branch's sets. Every copy in the dashboards is one of these, verbatim.
 */
export const RANGE_GATES = {
  wholeDay:
    "toDateTime(toDate($__fromTime - INTERVAL 1 SECOND, 'UTC') + 2, 'UTC') <= $__toTime",
  wholeMonth:
    "toDateTime(toStartOfMonth(addMonths(toDate($__fromTime - INTERVAL 1 SECOND, 'UTC'), 1)) + INTERVAL 1 MONTH, 'UTC') <= $__toTime",
} as const;
/** The panels whose rollup branches are gated by RANGE_GATES, by dashboard uid. */
export const GATED_PANELS: readonly { uid: string; title: string }[] = [
  { uid: "sessionhouse-first-seen", title: "Machine accounts used by humans" },
  { uid: "sessionhouse-sessions-overview", title: "Client IP addresses" },
  { uid: "sessionhouse-who-accessed-what", title: "Users × resources" },
];
/** Dashboards older than this schema are migrated by Grafana on load; ours are written current. */
export const MIN_SCHEMA_VERSION = 39;

/**
 * The plugin's query types and the numeric format each one is sent with: the backend reads
 * `format` as sqlutil.FormatQueryOption (0 time series, 1 table, 2 logs, 3 traces), see
 * github.com/grafana/grafana-plugin-sdk-go data/sqlutil/query.go and the plugin's
 * src/types/queryBuilder.ts QueryType.
 */
export const FORMAT_OF_QUERY_TYPE = {
  timeseries: 0,
  table: 1,
  logs: 2,
  traces: 3,
} as const;

const datasourceRef = z.object({
  type: z.literal(PLUGIN_TYPE),
  uid: z.literal(DATASOURCE_REF.uid),
});

export const targetSchema = z
  .object({
    refId: z.string().min(1),
    datasource: datasourceRef,
    editorType: z.literal("sql"),
    queryType: z.enum(["timeseries", "table", "logs", "traces"]),
    format: z.number().int().min(0).max(4),
    pluginVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
    rawSql: z.string().min(1),
  })
  .loose()
  .refine((t) => t.format === FORMAT_OF_QUERY_TYPE[t.queryType], {
    message: "format must be the plugin's number for the queryType",
  });

const gridPosSchema = z.object({
  h: z.number().int().positive(),
  w: z.number().int().min(1).max(24),
  x: z.number().int().min(0).max(23),
  y: z.number().int().min(0),
});

export const panelSchema = z
  .object({
    id: z.number().int().positive(),
    type: z.string().min(1),
    title: z.string().min(1),
    description: z.string().optional(),
    gridPos: gridPosSchema,
    datasource: datasourceRef,
    targets: z.array(targetSchema).min(1),
    interval: z.string().optional(),
    fieldConfig: z.object({
      defaults: z.record(z.string(), z.unknown()),
      overrides: z.array(z.unknown()),
    }),
    options: z.record(z.string(), z.unknown()),
  })
  .loose()
  .refine((p) => p.gridPos.x + p.gridPos.w <= 24, {
    message: "panel is wider than the 24-column grid",
  });

const datasourceVariableSchema = z
  .object({
    type: z.literal("datasource"),
    name: z.literal("datasource"),
    query: z.literal(PLUGIN_TYPE),
  })
  .loose();

export const queryVariableSchema = z
  .object({
    type: z.literal("query"),
    name: z.string().regex(/^\w+$/),
    label: z.string().min(1),
    datasource: datasourceRef,
    query: z.string().min(1),
    definition: z.string().min(1),
    multi: z.boolean(),
    includeAll: z.boolean(),
    allValue: z.string().nullable().optional(),
    /** Grafana keeps a value the query did not offer (typed, or from a URL) unless false. */
    allowCustomValue: z.boolean().optional(),
    refresh: z.union([z.literal(1), z.literal(2)]),
    current: z
      .object({ value: z.union([z.string(), z.array(z.string())]) })
      .loose(),
  })
  .loose()
  .refine((v) => v.query === v.definition, {
    message: "definition must show the query",
  });

/**
 * A value typed by the user or carried by a link (`var-NAME=`), never offered as options: queries
 * read it as `'${NAME:percentencode}'`, which only letters, digits, `-._~` and `%XX` can reach.
 */
export const textboxVariableSchema = z
  .object({
    type: z.literal("textbox"),
    name: z.string().regex(/^\w+$/),
    label: z.string().min(1),
    query: z.string(),
    current: z.object({ value: z.string() }).loose(),
  })
  .loose();

/** A fixed list of choices (comma-separated `query`), one chosen; read like a textbox. */
export const customVariableSchema = z
  .object({
    type: z.literal("custom"),
    name: z.string().regex(/^\w+$/),
    label: z.string().min(1),
    query: z.string().min(1),
    multi: z.literal(false),
    includeAll: z.literal(false),
    allowCustomValue: z.literal(false),
    current: z.object({ value: z.string() }).loose(),
  })
  .loose()
  .refine((v) => v.query.split(",").includes(v.current.value), {
    message: "the current value must be one of the choices",
  });

/** A fixed, hidden value the plugin reads (`clickhouse_adhoc_query`). */
export const constantVariableSchema = z
  .object({
    type: z.literal("constant"),
    name: z.string().regex(/^\w+$/),
    query: z.string().min(1),
    hide: z.literal(2),
  })
  .loose();

/** Grafana's ad hoc filters: the plugin adds them to queries (grafana-sql.ts applyAdHocFilters). */
export const adhocVariableSchema = z
  .object({
    type: z.literal("adhoc"),
    name: z.string().regex(/^\w+$/),
    datasource: datasourceRef,
    filters: z.array(z.unknown()),
  })
  .loose();

export const dashboardSchema = z
  .object({
    uid: z.string().regex(/^[\w-]{1,40}$/),
    title: z.string().min(1),
    schemaVersion: z.number().int().min(MIN_SCHEMA_VERSION),
    time: z.object({ from: z.string(), to: z.string() }),
    tags: z.array(z.string()),
    templating: z.object({
      list: z.array(
        z.discriminatedUnion("type", [
          datasourceVariableSchema,
          queryVariableSchema,
          textboxVariableSchema,
          customVariableSchema,
          constantVariableSchema,
          adhocVariableSchema,
        ]),
      ),
    }),
    panels: z.array(panelSchema).min(1),
  })
  .loose();

export type Target = z.infer<typeof targetSchema>;
export type Panel = z.infer<typeof panelSchema>;
export type QueryVariable = z.infer<typeof queryVariableSchema>;
export type TextboxVariable = z.infer<typeof textboxVariableSchema>;
export type CustomVariable = z.infer<typeof customVariableSchema>;
export type Dashboard = z.infer<typeof dashboardSchema>;

export interface DashboardFile {
  file: string;
  /** The JSON as written, for checks the schema cannot express. */
  raw: unknown;
  dashboard: Dashboard;
}

export function dashboardFiles(): string[] {
  return readdirSync(DASHBOARDS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
}

/** Every dashboard, parsed with the schema (throws with the file name on the first bad one). */
export function loadDashboards(): DashboardFile[] {
  return dashboardFiles().map((file) => {
    const raw = JSON.parse(
      readFileSync(join(DASHBOARDS_DIR, file), "utf8"),
    ) as unknown;
    const parsed = dashboardSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
    return { file, raw, dashboard: parsed.data };
  });
}

export function queryVariables(d: Dashboard): QueryVariable[] {
  return d.templating.list.filter(
    (v): v is QueryVariable => v.type === "query",
  );
}

/**
 * A value the data has for each textbox variable, so that the panels reading it show something
 * in the tests and the benchmark: Session detail is looked at for the stored session with the
 * most children, Detections for the actor with the most hits that page.
 */
export const TEXTBOX_SAMPLES: Readonly<Record<string, string>> = {
  session_id: `SELECT parent_session_id FROM sessions
    WHERE parent_session_id IN (
      SELECT id FROM sessions
      WHERE id IN (SELECT parent_session_id FROM sessions WHERE parent_session_id != ''))
    GROUP BY parent_session_id ORDER BY count() DESC, parent_session_id LIMIT 1`,
  // The Detections dashboard narrowed to the actor with the most hits that page.
  actor: `SELECT actor FROM detection_hits FINAL WHERE actor != '' AND pages
    GROUP BY actor ORDER BY count() DESC, actor LIMIT 1`,
};

/** Variables holding one value typed or chosen from a fixed list, read as `'${name:percentencode}'`. */
export function valueVariables(
  d: Dashboard,
): (TextboxVariable | CustomVariable)[] {
  return d.templating.list.filter(
    (v): v is TextboxVariable | CustomVariable =>
      v.type === "textbox" || v.type === "custom",
  );
}

/** Names used as `$name`, `${name…}` or `[[name…]]` in a query, in order of appearance. */
export function variableReferences(sql: string): string[] {
  const names: string[] = [];
  for (const m of sql.matchAll(
    /\$(\w+)|\[\[(\w+?)(?::\w+)?\]\]|\$\{(\w+)(?:\.[^:^}]+)?(?::[^}]+)?\}/g,
  )) {
    const name = m[1] ?? m[2] ?? m[3];
    if (name !== undefined) names.push(name);
  }
  return names;
}
