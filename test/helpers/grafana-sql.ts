// Turns a dashboard query into the SQL that reaches ClickHouse, the way Grafana and the
// ClickHouse data source plugin (grafana-clickhouse-datasource v4) do it, so a test can run
// exactly what a panel would run. Three steps, in the plugin's order:
//
// 1. `$__conditionalAll(condition, $var)` — the plugin's frontend (CHDatasource.applyTemplateVariables
//    → applyConditionalAll): replaced by `1=1` when the variable's current value is All (`$__all`)
//    or empty, by the condition otherwise. Runs before variables are interpolated.
//    https://grafana.com/docs/plugins/grafana-clickhouse-datasource/latest/template-variables/#using-the-all-option-with-__conditionalall
//    (source: github.com/grafana/clickhouse-datasource src/data/CHDatasource.ts, docs/sources/template-variables.md)
// 2. Template variables — Grafana's templateSrv.replace with the plugin's format function: a
//    multi-value variable without an explicit format becomes `'a','b'` (joined, not escaped), a
//    single value is inserted raw; `${var:singlequote}` quotes and escapes each value; All
//    expands to every option (or to the variable's custom all value, unformatted).
//    https://grafana.com/docs/grafana/latest/dashboards/variables/variable-syntax/
// 3. Macros — the plugin's backend (pkg/macros/macros.go) through grafana/sqlds's interpolator
//    (macros.go: `\$__name\b` then a bracketed, comma-separated argument list, longest macro
//    name first; every occurrence replaced).
//    https://grafana.com/docs/plugins/grafana-clickhouse-datasource/latest/query-editor/#macros

/** Grafana's value of a variable whose "All" option is selected. */
export const ALL = "$__all";

export interface TimeRange {
  fromMs: number;
  toMs: number;
}

/** A template variable as Grafana holds it at query time. */
export interface TemplateVariable {
  name: string;
  /** `current.value`: an array for multi-value variables, `["$__all"]` when All is selected. */
  current: string | readonly string[];
  /** The options the variable's query produced (without All); what All expands to. */
  options: readonly string[];
  /** A custom all value replaces the expansion to every option. */
  allValue?: string | null | undefined;
}

export interface QueryContext {
  range: TimeRange;
  /** The query's interval ($__interval, $__timeInterval), in ms. */
  intervalMs: number;
  variables: readonly TemplateVariable[];
}

/** Grafana's global variables, interpolated by templateSrv (not by the plugin). */
export const GRAFANA_BUILTINS: ReadonlySet<string> = new Set([
  "__from",
  "__to",
  "__interval",
  "__interval_ms",
  "__range",
  "__range_s",
  "__range_ms",
  "__rate_interval",
  "__rate_interval_ms",
  "__dashboard",
  "__org",
  "__user",
  "__timezone",
]);

/** The plugin's backend macros (pkg/macros/macros.go). */
export const PLUGIN_MACROS: ReadonlySet<string> = new Set([
  "fromTime",
  "toTime",
  "fromTime_ms",
  "toTime_ms",
  "timeFilter",
  "timeFilter_ms",
  "dateFilter",
  "dateTimeFilter",
  "dt",
  "timeInterval",
  "timeInterval_ms",
  "interval_s",
]);

/** The plugin's frontend macro. */
export const CONDITIONAL_ALL = "conditionalAll";

export class GrafanaSqlError extends Error {
  override name = "GrafanaSqlError";
}

// ---------------------------------------------------------------------------------------------
// Step 1: $__conditionalAll

/**
 * The arguments of the macro whose `(` is at `openIndex`, split at top-level commas, untrimmed;
 * [] when the brackets never close. Brackets inside string literals count too, as in the plugin.
 */
function conditionalAllArgs(query: string, openIndex: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let argStart = openIndex + 1;
  for (let i = openIndex; i < query.length; i++) {
    const c = query[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    if (c === "," && depth === 1) {
      args.push(query.slice(argStart, i));
      argStart = i + 1;
    }
    if (depth === 0) {
      args.push(query.slice(argStart, i));
      return args;
    }
  }
  return [];
}

/** Every `$__conditionalAll(…)` call in a query, parsed as the plugin parses it. */
export function conditionalAllCalls(
  sql: string,
): { full: string; condition: string; variableArg: string }[] {
  const macro = "$__conditionalAll(";
  const calls: { full: string; condition: string; variableArg: string }[] = [];
  for (
    let at = sql.indexOf(macro);
    at !== -1;
    at = sql.indexOf(macro, at + macro.length)
  ) {
    const args = conditionalAllArgs(sql, at + macro.length - 1);
    if (args.length !== 2)
      throw new GrafanaSqlError(
        `${sql.slice(at, at + 60)}…: $__conditionalAll takes 2 arguments`,
      );
    const [condition = "", variableArg = ""] = args;
    calls.push({
      full: `${macro}${condition},${variableArg})`,
      condition,
      variableArg: variableArg.trim(),
    });
  }
  return calls;
}

/** `$__conditionalAll(cond, $var)` → `cond`, or `1=1` when $var is All or empty. */
export function applyConditionalAll(
  rawQuery: string,
  variables: readonly TemplateVariable[],
): string {
  const macro = "$__conditionalAll(";
  let query = rawQuery;
  let at = query.lastIndexOf(macro);
  while (at !== -1) {
    const args = conditionalAllArgs(query, at + macro.length - 1);
    // The plugin gives up and leaves the rest of the query as it is; ClickHouse then refuses it.
    if (args.length !== 2) return query;
    const [condition = "", varArg = ""] = args;
    // The plugin's own pattern: `${name}` or `$name`, and only the name (a `:format` defeats it,
    // which its documentation warns about).
    const name = /(?<=\$\{)\w+(?=\})|(?<=\$)\w+/.exec(varArg.trim())?.[0];
    let phrase = condition;
    if (name !== undefined) {
      const variable = variables.find((v) => v.name === name);
      const value =
        variable === undefined ? undefined : String(variable.current);
      if (value === "" || value === ALL) phrase = "1=1";
    }
    query = query.replace(`${macro}${condition},${varArg})`, phrase);
    at = query.lastIndexOf(macro);
  }
  return query;
}

// ---------------------------------------------------------------------------------------------
// Step 2: template variables

/** Grafana's variable pattern: $name, [[name:format]], ${name.field:format}. */
const VARIABLE_PATTERN =
  /\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}/g;

function isAllValue(value: string | readonly string[]): boolean {
  return value === ALL || (Array.isArray(value) && value[0] === ALL);
}

/** The plugin's format function (CHDatasource.format): arrays quoted and joined, scalars raw. */
function pluginFormat(value: string | readonly string[]): string {
  return Array.isArray(value) ? `'${value.join("','")}'` : String(value);
}

export const encodeURIComponentStrict = (s: string): string =>
  encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

const FORMATS: Readonly<Record<string, (values: readonly string[]) => string>> =
  {
    singlequote: (vs) => vs.map((v) => `'${v.replace(/'/g, "\\'")}'`).join(","),
    doublequote: (vs) => vs.map((v) => `"${v.replace(/"/g, '\\"')}"`).join(","),
    sqlstring: (vs) => vs.map((v) => `'${v.replace(/'/g, "''")}'`).join(","),
    // Grafana's encodeURIComponentStrict: encodeURIComponent, and !'()* as %XX too.
    // Grafana's encodeURIComponentStrict (encodeURIComponent, and !'()* as %XX too); several
    // values are encoded as one `{a,b}`.
    percentencode: (vs) =>
      encodeURIComponentStrict(
        vs.length === 1 ? (vs[0] ?? "") : `{${vs.join(",")}}`,
      ),
    csv: (vs) => vs.join(","),
    raw: (vs) => vs.join(","),
    text: (vs) => vs.join(" + "),
  };

function formatValue(
  value: string | readonly string[],
  format: string | undefined,
): string {
  if (format === undefined) return pluginFormat(value);
  const formatter = FORMATS[format];
  if (!formatter)
    throw new GrafanaSqlError(
      `variable format "${format}" is not supported by this expander`,
    );
  return formatter(typeof value === "string" ? [value] : value);
}

/** Grafana's text of $__interval (@grafana/data rangeutil.secondsToHms): the largest unit only. */
export function intervalText(intervalMs: number): string {
  const seconds = intervalMs / 1000;
  const years = Math.floor(seconds / 31_536_000);
  if (years) return `${years}y`;
  const days = Math.floor((seconds % 31_536_000) / 86_400);
  if (days) return `${days}d`;
  const hours = Math.floor((seconds % 86_400) / 3600);
  if (hours) return `${hours}h`;
  const minutes = Math.floor((seconds % 3600) / 60);
  if (minutes) return `${minutes}m`;
  const secs = Math.floor(seconds % 60);
  if (secs) return `${secs}s`;
  return `${Math.floor(intervalMs)}ms`;
}

function builtinValue(name: string, ctx: QueryContext): string | undefined {
  const rangeMs = ctx.range.toMs - ctx.range.fromMs;
  switch (name) {
    case "__from":
      return String(ctx.range.fromMs);
    case "__to":
      return String(ctx.range.toMs);
    case "__interval":
      return intervalText(ctx.intervalMs);
    case "__interval_ms":
      return String(ctx.intervalMs);
    case "__range":
      return intervalText(rangeMs);
    case "__range_s":
      return String(Math.round(rangeMs / 1000));
    case "__range_ms":
      return String(rangeMs);
    default:
      return undefined;
  }
}

/**
 * templateSrv.replace with the plugin's formatter. Names starting with `__` that Grafana does
 * not know are left for the backend (the plugin's macros); any other unknown name is an error
 * here (Grafana would send `$name` as it is, and the panel would fail in ClickHouse).
 */
export function interpolateVariables(query: string, ctx: QueryContext): string {
  return query.replace(
    VARIABLE_PATTERN,
    (match: string, ...groups: (string | undefined)[]) => {
      const [
        plain,
        bracketName,
        bracketFormat,
        braceName,
        fieldPath,
        braceFormat,
      ] = groups;
      const name = plain ?? bracketName ?? braceName ?? "";
      const format = bracketFormat ?? braceFormat;
      const builtin = builtinValue(name, ctx);
      if (builtin !== undefined) return builtin;
      if (name.startsWith("__")) {
        if (GRAFANA_BUILTINS.has(name))
          throw new GrafanaSqlError(
            `${match}: Grafana variable not supported by this expander`,
          );
        return match;
      }
      if (fieldPath !== undefined)
        throw new GrafanaSqlError(
          `${match}: variable fields are not supported by this expander`,
        );
      const variable = ctx.variables.find((v) => v.name === name);
      if (!variable)
        throw new GrafanaSqlError(`${match}: no template variable "${name}"`);
      let value = variable.current;
      if (isAllValue(value)) {
        // Grafana: a custom all value is inserted as it is, unless a format was asked for.
        if (
          variable.allValue !== undefined &&
          variable.allValue !== null &&
          variable.allValue !== "" &&
          format === undefined
        ) {
          return interpolateVariables(variable.allValue, ctx);
        }
        value = variable.allValue ? variable.allValue : variable.options;
      }
      return formatValue(value, format);
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Step 3: backend macros

/** sqlds parseArgs: a bracketed list right after the name, split at top-level commas, trimmed. */
function macroArgs(
  after: string,
): { args: string[]; length: number } | undefined {
  if (!after.startsWith("(")) return { args: [], length: 0 };
  const args: string[] = [];
  let depth = 0;
  let arg = "";
  for (let i = 0; i < after.length; i++) {
    const c = after[i] ?? "";
    if (c === "(") {
      depth++;
      if (depth === 1) continue;
    } else if (c === ")") {
      depth--;
      if (depth === 0) {
        args.push(arg.trim());
        return { args, length: i + 1 };
      }
    } else if (c === "," && depth === 1) {
      args.push(arg.trim());
      arg = "";
      continue;
    }
    arg += c;
  }
  return undefined;
}

const toDateTime = (ms: number): string =>
  `toDateTime(${Math.floor(ms / 1000)})`;
const toDateTime64 = (ms: number): string =>
  `fromUnixTimestamp64Milli(${Math.trunc(ms)})`;
const toDate = (ms: number): string =>
  `toDate('${new Date(ms).toISOString().slice(0, 10)}')`;

function expectArgs(name: string, args: readonly string[], n: number): void {
  if (args.length !== n)
    throw new GrafanaSqlError(
      `$__${name}: expected ${n} argument(s), received ${args.length}`,
    );
}

function macro(
  name: string,
  args: readonly string[],
  ctx: QueryContext,
): string {
  const { fromMs, toMs } = ctx.range;
  const seconds = Math.max(Math.trunc(ctx.intervalMs / 1000), 1);
  const [a = "", b = ""] = args;
  switch (name) {
    case "fromTime":
      return toDateTime(fromMs);
    case "toTime":
      return toDateTime(toMs);
    case "fromTime_ms":
      return toDateTime64(fromMs);
    case "toTime_ms":
      return toDateTime64(toMs);
    case "timeFilter":
      expectArgs(name, args, 1);
      return `${a} >= ${toDateTime(fromMs)} AND ${a} <= ${toDateTime(toMs)}`;
    case "timeFilter_ms":
      expectArgs(name, args, 1);
      return `${a} >= ${toDateTime64(fromMs)} AND ${a} <= ${toDateTime64(toMs)}`;
    case "dateFilter":
      expectArgs(name, args, 1);
      return `${a} >= ${toDate(fromMs)} AND ${a} <= ${toDate(toMs)}`;
    case "dateTimeFilter":
    case "dt":
      expectArgs(name, args, 2);
      return `(${a} >= ${toDate(fromMs)} AND ${a} <= ${toDate(toMs)}) AND (${b} >= ${toDateTime(fromMs)} AND ${b} <= ${toDateTime(toMs)})`;
    case "timeInterval":
      expectArgs(name, args, 1);
      return `toStartOfInterval(toDateTime(${a}), INTERVAL ${seconds} second)`;
    case "timeInterval_ms":
      expectArgs(name, args, 1);
      return `toStartOfInterval(toDateTime64(${a}, 3), INTERVAL ${Math.max(Math.trunc(ctx.intervalMs), 1)} millisecond)`;
    case "interval_s":
      return String(seconds);
    default:
      throw new GrafanaSqlError(`$__${name}: not a macro of the plugin`);
  }
}

/** The backend's interpolation of the plugin's macros, longest name first. */
export function expandMacros(query: string, ctx: QueryContext): string {
  let sql = query;
  const names = [...PLUGIN_MACROS].sort((x, y) => y.length - x.length);
  for (const name of names) {
    const pattern = new RegExp(`\\$__${name}\\b`, "g");
    const matches: { full: string; args: string[] }[] = [];
    for (const m of sql.matchAll(pattern)) {
      const end = m.index + m[0].length;
      const parsed = macroArgs(sql.slice(end));
      if (!parsed)
        throw new GrafanaSqlError(
          `$__${name}: failed to parse macro arguments (missing close bracket?)`,
        );
      matches.push({
        full: sql.slice(m.index, end + parsed.length),
        args: parsed.args,
      });
    }
    for (const m of matches)
      sql = sql.replaceAll(m.full, macro(name, m.args, ctx));
  }
  const left = /\$__\w+/.exec(sql);
  if (left)
    throw new GrafanaSqlError(
      `${left[0]}: neither a Grafana variable nor a macro of the plugin`,
    );
  return sql;
}

// ---------------------------------------------------------------------------------------------
// Ad hoc filters: the plugin's frontend (src/data/adHocFilter.ts, AdHocFilter.apply) after the
// template variables. The keys and values offered come from the `clickhouse_adhoc_query` constant;
// when it is a SELECT, its table is the target, and every query that names that table (a whole
// word, quotes removed) gets the filters as ClickHouse's `additional_table_filters` setting, which
// applies them to every read of the table in the query, subqueries included.
// https://grafana.com/docs/plugins/grafana-clickhouse-datasource/latest/template-variables/#ad-hoc-filters

/** One filter of an `adhoc` variable, as Grafana holds it. */
export interface AdHocFilter {
  key: string;
  operator: "=" | "!=" | "<" | ">" | "=~" | "!~";
  value: string;
}

/** A string literal inside the single-quoted setting value: two layers of escaping. */
const escapeForOuterLiteral = (value: string): string =>
  value.replace(/\\/g, "\\\\\\\\").replace(/'/g, "\\\\\\'");

const AD_HOC_OPERATORS: Readonly<Record<AdHocFilter["operator"], string>> = {
  "=": "=",
  "!=": "!=",
  "<": "<",
  ">": ">",
  "=~": "REGEXP",
  "!~": "NOT REGEXP",
};

/** The table of the `clickhouse_adhoc_query` SELECT: the filters' target. */
export function adHocTargetTable(adhocQuery: string): string {
  const table = /\bFROM\s+(?:\w+\.)?(\w+)/i.exec(adhocQuery)?.[1];
  if (table === undefined)
    throw new GrafanaSqlError(
      `${adhocQuery}: failed to get table from adhoc query`,
    );
  return table;
}

/** `sql` with the filters appended as `settings additional_table_filters`, when it reads the table. */
export function applyAdHocFilters(
  sql: string,
  filters: readonly AdHocFilter[],
  targetTable: string,
): string {
  if (filters.length === 0) return sql;
  if (!new RegExp(`\\b${targetTable}\\b`, "i").test(sql.replace(/["`]/g, "")))
    return sql;
  for (const f of filters)
    if (!/^\w+$/.test(f.key))
      throw new GrafanaSqlError(
        `ad hoc key ${f.key}: only plain column names are supported by this expander`,
      );
  const condition = filters
    .map(
      (f, i) =>
        ` ${f.key} ${AD_HOC_OPERATORS[f.operator]} \\'${escapeForOuterLiteral(f.value)}\\' ${i < filters.length - 1 ? "AND" : ""}`,
    )
    .join("");
  return `${sql.replace(/;\s*$/, "")}\nsettings additional_table_filters={'${targetTable}' : '${condition}'}`;
}

// ---------------------------------------------------------------------------------------------

/** The SQL a panel target (or a variable's query) sends to ClickHouse. */
export function renderQuery(
  rawSql: string,
  ctx: QueryContext & {
    adHoc?: { filters: readonly AdHocFilter[]; targetTable: string };
  },
): string {
  const interpolated = interpolateVariables(
    applyConditionalAll(rawSql, ctx.variables),
    ctx,
  );
  return expandMacros(
    ctx.adHoc
      ? applyAdHocFilters(
          interpolated,
          ctx.adHoc.filters,
          ctx.adHoc.targetTable,
        )
      : interpolated,
    ctx,
  );
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** "5m" → 300000 (a panel's or a query's min interval). */
export function parseInterval(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d|w)$/.exec(text.trim());
  const unit = m?.[2] === undefined ? undefined : UNIT_MS[m[2]];
  if (!m?.[1] || unit === undefined)
    throw new GrafanaSqlError(
      `interval "${text}" is not a number and a unit (ms, s, m, h, d, w)`,
    );
  return Number(m[1]) * unit;
}

/** Grafana's rounding of range / max data points to a "nice" interval (@grafana/data rangeutil.roundInterval). */
export function roundInterval(ms: number): number {
  const steps: [number, number][] = [
    [10, 1],
    [15, 10],
    [35, 20],
    [75, 50],
    [150, 100],
    [350, 200],
    [750, 500],
    [1500, 1000],
    [3500, 2000],
    [7500, 5000],
    [12_500, 10_000],
    [17_500, 15_000],
    [25_000, 20_000],
    [45_000, 30_000],
    [90_000, 60_000],
    [210_000, 120_000],
    [450_000, 300_000],
    [750_000, 600_000],
    [1_050_000, 900_000],
    [1_500_000, 1_200_000],
    [2_700_000, 1_800_000],
    [5_400_000, 3_600_000],
    [9_000_000, 7_200_000],
    [16_200_000, 10_800_000],
    [32_400_000, 21_600_000],
    [86_400_000, 43_200_000],
    [604_800_000, 86_400_000],
    [1_814_400_000, 604_800_000],
    [3_628_800_000, 2_592_000_000],
  ];
  for (const [below, step] of steps) if (ms < below) return step;
  return 31_536_000_000;
}

/** The interval Grafana hands a query: range / max data points, rounded, never below the min interval. */
export function queryInterval(
  range: TimeRange,
  minInterval?: string,
  maxDataPoints = 1000,
): number {
  const derived = roundInterval((range.toMs - range.fromMs) / maxDataPoints);
  return minInterval ? Math.max(derived, parseInterval(minInterval)) : derived;
}
