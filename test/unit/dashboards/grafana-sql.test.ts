// The expander against the plugin's documented outputs (its public docs: "Macros" at
// https://grafana.com/docs/plugins/grafana-clickhouse-datasource/latest/query-editor/#macros and
// https://grafana.com/docs/plugins/grafana-clickhouse-datasource/latest/template-variables/), so
// the query tests run what Grafana would run.
import { describe, expect, it } from "vitest";
import {
  ALL,
  adHocTargetTable,
  applyAdHocFilters,
  applyConditionalAll,
  expandMacros,
  GrafanaSqlError,
  interpolateVariables,
  intervalText,
  queryInterval,
  renderQuery,
  type QueryContext,
  type TemplateVariable,
} from "../../helpers/grafana-sql.js";

// The range and interval of the documentation's examples.
const ctx = (
  variables: TemplateVariable[] = [],
  intervalMs = 20_000,
): QueryContext => ({
  range: { fromMs: 1415792726123, toMs: 1447328726456 },
  intervalMs,
  variables,
});

describe("macros, as the plugin documents them", () => {
  it.each([
    [
      "$__timeFilter(time)",
      "time >= toDateTime(1415792726) AND time <= toDateTime(1447328726)",
    ],
    [
      "$__timeFilter_ms(time)",
      "time >= fromUnixTimestamp64Milli(1415792726123) AND time <= fromUnixTimestamp64Milli(1447328726456)",
    ],
    ["$__fromTime", "toDateTime(1415792726)"],
    ["$__toTime", "toDateTime(1447328726)"],
    ["$__fromTime_ms", "fromUnixTimestamp64Milli(1415792726123)"],
    ["$__toTime_ms", "fromUnixTimestamp64Milli(1447328726456)"],
    ["$__interval_s", "20"],
    [
      "$__timeInterval(column)",
      "toStartOfInterval(toDateTime(column), INTERVAL 20 second)",
    ],
    [
      "$__dateFilter(date)",
      "date >= toDate('2014-11-12') AND date <= toDate('2015-11-12')",
    ],
    [
      "$__dt(d, t)",
      "(d >= toDate('2014-11-12') AND d <= toDate('2015-11-12')) AND (t >= toDateTime(1415792726) AND t <= toDateTime(1447328726))",
    ],
  ])("%s", (macro, expected) => {
    expect(expandMacros(macro, ctx())).toBe(expected);
  });

  it("buckets in milliseconds with $__timeInterval_ms, and never below one second with $__timeInterval", () => {
    expect(expandMacros("$__timeInterval_ms(column)", ctx([], 20))).toBe(
      "toStartOfInterval(toDateTime64(column, 3), INTERVAL 20 millisecond)",
    );
    expect(expandMacros("$__timeInterval(c)", ctx([], 20))).toBe(
      "toStartOfInterval(toDateTime(c), INTERVAL 1 second)",
    );
  });

  it("tells $__timeFilter from $__timeFilter_ms and replaces every occurrence", () => {
    const sql = expandMacros(
      "$__timeFilter_ms(a) OR $__timeFilter(b) OR $__timeFilter(b)",
      ctx(),
    );
    expect(sql).toBe(
      "a >= fromUnixTimestamp64Milli(1415792726123) AND a <= fromUnixTimestamp64Milli(1447328726456) OR " +
        "b >= toDateTime(1415792726) AND b <= toDateTime(1447328726) OR b >= toDateTime(1415792726) AND b <= toDateTime(1447328726)",
    );
  });

  it("takes nested brackets in an argument, as sqlds does", () => {
    expect(expandMacros("$__timeInterval(toDateTime(x, 'UTC'))", ctx())).toBe(
      "toStartOfInterval(toDateTime(toDateTime(x, 'UTC')), INTERVAL 20 second)",
    );
  });

  it("refuses what the plugin cannot expand", () => {
    expect(() => expandMacros("$__timeFilter(a, b)", ctx())).toThrow(
      GrafanaSqlError,
    );
    expect(() => expandMacros("$__timeFilter(a", ctx())).toThrow(
      /close bracket/,
    );
    expect(() => expandMacros("$__nope(a)", ctx())).toThrow(
      /neither a Grafana variable nor a macro/,
    );
  });
});

describe("template variables", () => {
  const env = (
    current: string | string[],
    allValue?: string,
  ): TemplateVariable => ({
    name: "env",
    current,
    options: ["prod", "dev"],
    allValue,
  });

  it("formats a multi-value variable as the plugin does: quoted, joined, not escaped", () => {
    expect(
      interpolateVariables("x IN ($env)", ctx([env(["prod", "o'brien"])])),
    ).toBe("x IN ('prod','o'brien')");
    expect(interpolateVariables("x = '$env'", ctx([env("prod")]))).toBe(
      "x = 'prod'",
    );
  });

  it("escapes with :singlequote and :sqlstring", () => {
    expect(
      interpolateVariables(
        "${env:singlequote}",
        ctx([env(["prod", "o'brien"])]),
      ),
    ).toBe("'prod','o\\'brien'");
    expect(
      interpolateVariables("${env:sqlstring}", ctx([env(["o'brien"])])),
    ).toBe("'o''brien'");
    expect(interpolateVariables("[[env:csv]]", ctx([env(["a", "b"])]))).toBe(
      "a,b",
    );
  });

  it("expands All to every option, or to a custom all value as it is", () => {
    expect(
      interpolateVariables("x IN (${env:singlequote})", ctx([env([ALL])])),
    ).toBe("x IN ('prod','dev')");
    expect(interpolateVariables("x LIKE $env", ctx([env([ALL], "'%'")]))).toBe(
      "x LIKE '%'",
    );
  });

  it("interpolates Grafana's global variables and leaves the plugin's macros alone", () => {
    const c = {
      ...ctx(),
      range: { fromMs: 1000, toMs: 7_201_000 },
      intervalMs: 120_000,
    };
    expect(
      interpolateVariables(
        "$__from $__to $__interval $__interval_ms $__range_s $__timeFilter(t)",
        c,
      ),
    ).toBe("1000 7201000 2m 120000 7200 $__timeFilter(t)");
  });

  it("refuses an undefined variable", () => {
    expect(() => interpolateVariables("$nope", ctx())).toThrow(
      /no template variable/,
    );
  });
});

describe("$__conditionalAll", () => {
  const sql =
    "WHERE $__conditionalAll(e IN (${env:singlequote}), $env) AND $__conditionalAll(f(a, b) = 1, ${other})";
  const vars = (
    env: string | string[],
    other: string | string[],
  ): TemplateVariable[] => [
    { name: "env", current: env, options: ["prod", "dev"] },
    { name: "other", current: other, options: ["x"] },
  ];

  it("becomes 1=1 when the variable is All or empty", () => {
    expect(applyConditionalAll(sql, vars([ALL], ""))).toBe("WHERE 1=1 AND 1=1");
    expect(applyConditionalAll(sql, vars([], ALL))).toBe("WHERE 1=1 AND 1=1");
  });

  it("becomes the condition otherwise, then interpolated", () => {
    expect(renderQuery(sql, ctx(vars(["prod"], ["x"])))).toBe(
      "WHERE e IN ('prod') AND f(a, b) = 1",
    );
  });

  it("does not see All through a format in the second argument (the documentation's warning)", () => {
    const formatted = "$__conditionalAll(e IN ($env), ${env:singlequote})";
    expect(applyConditionalAll(formatted, vars([ALL], ""))).toBe("e IN ($env)");
  });
});

describe("interval", () => {
  it("rounds range / max data points as Grafana does, and honours a panel's min interval", () => {
    const twoDays = { fromMs: 0, toMs: 2 * 86_400_000 };
    expect(queryInterval(twoDays)).toBe(120_000);
    expect(queryInterval(twoDays, "5m")).toBe(300_000);
    expect(queryInterval({ fromMs: 0, toMs: 6 * 3_600_000 })).toBe(20_000);
    expect(intervalText(300_000)).toBe("5m");
    expect(intervalText(604_800_000)).toBe("7d");
    expect(intervalText(500)).toBe("500ms");
  });
});

describe("ad hoc filters, as the plugin applies them", () => {
  const sql = "SELECT count() FROM sessions FINAL WHERE x = 1";

  it("append the filters as additional_table_filters of the target table, escaped twice", () => {
    expect(
      applyAdHocFilters(
        sql,
        [
          { key: "user_key", operator: "=", value: "o'brien\\x" },
          { key: "resource_technology", operator: "!=", value: "s3" },
        ],
        "sessions",
      ),
    ).toBe(
      `${sql}\nsettings additional_table_filters={'sessions' : ' user_key = \\'o\\\\\\'brien\\\\\\\\x\\' AND resource_technology != \\'s3\\' '}`,
    );
  });

  it("map the regex operators to REGEXP and leave queries of other tables alone", () => {
    expect(
      applyAdHocFilters(
        sql,
        [{ key: "user_key", operator: "=~", value: "^svc-" }],
        "sessions",
      ),
    ).toContain(" user_key REGEXP \\'^svc-\\' ");
    expect(
      applyAdHocFilters(
        "SELECT 1 FROM session_polls",
        [{ key: "user_key", operator: "=", value: "a" }],
        "sessions",
      ),
    ).toBe("SELECT 1 FROM session_polls");
    expect(applyAdHocFilters(sql, [], "sessions")).toBe(sql);
  });

  it("take the target table from the clickhouse_adhoc_query SELECT", () => {
    expect(adHocTargetTable("SELECT a, b\nFROM sessions\nLIMIT 1")).toBe(
      "sessions",
    );
    expect(adHocTargetTable("SELECT a FROM db.sessions")).toBe("sessions");
    expect(() => adHocTargetTable("sessionhouse")).toThrow(GrafanaSqlError);
  });
});
