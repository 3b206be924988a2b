// The provisioned alert rules (dashboards/provisioning/alerting/*.yaml), read with the schema of
// Grafana's alerting file provisioning (pkg/services/provisioning/alerting: AlertRuleGroupV1,
// AlertRuleV1, QueryV1) and what the rules' ClickHouse queries need from the plugin.
// https://grafana.com/docs/grafana/latest/alerting/set-up/provision-alerting-resources/file-provisioning/
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { PLUGIN_TYPE, REPO_ROOT } from "./dashboards.js";

export const ALERTING_DIR = join(REPO_ROOT, "dashboards/provisioning/alerting");
/** Grafana's expression data source (math, reduce, threshold). */
export const EXPRESSION_UID = "__expr__";

/** A Go duration as Grafana's provisioning reads `for` and `interval` ("0s", "10m", "1h30m"). */
const duration = z.string().regex(/^(\d+(ms|s|m|h))+$/);

const clickhouseModel = z
  .object({
    refId: z.string(),
    datasource: z.object({ type: z.literal(PLUGIN_TYPE), uid: z.string() }),
    editorType: z.literal("sql"),
    // A table: each row is one alert instance, its string columns the labels, its one number
    // the value the condition compares.
    queryType: z.literal("table"),
    format: z.literal(1),
    pluginVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
    rawSql: z.string().min(1),
  })
  .strict();

const thresholdModel = z
  .object({
    refId: z.string(),
    datasource: z.object({
      type: z.literal(EXPRESSION_UID),
      uid: z.literal(EXPRESSION_UID),
    }),
    type: z.literal("threshold"),
    expression: z.string().min(1),
    conditions: z
      .array(
        z.object({
          evaluator: z.object({
            type: z.enum(["gt", "lt"]),
            params: z.tuple([z.number()]),
          }),
        }),
      )
      .length(1),
  })
  .strict();

const query = z
  .object({
    refId: z.string().regex(/^[A-Z]$/),
    relativeTimeRange: z.object({
      from: z.number().int().min(0),
      to: z.number().int().min(0),
    }),
    datasourceUid: z.string().min(1),
    model: z.union([clickhouseModel, thresholdModel]),
  })
  .strict()
  .refine((q) => q.model.refId === q.refId, {
    message: "the model's refId must be the query's",
  })
  .refine(
    (q) =>
      "rawSql" in q.model
        ? q.model.datasource.uid === q.datasourceUid &&
          q.relativeTimeRange.from > q.relativeTimeRange.to
        : q.datasourceUid === EXPRESSION_UID,
    {
      message:
        "a query names its data source in both places and looks back some time; an expression runs on __expr__",
    },
  );

// Labels are interpolated with Grafana's environment ($NAME), annotations are not.
const noDollar = z.string().regex(/^[^$]*$/, "a $ would be read as a variable");

export const ruleSchema = z
  .object({
    uid: z.string().regex(/^[\w-]{1,40}$/),
    title: noDollar.min(1),
    condition: z.string(),
    data: z.array(query).min(2),
    noDataState: z.enum(["NoData", "Alerting", "OK", "KeepLast"]),
    execErrState: z.enum(["Error", "Alerting", "OK", "KeepLast"]),
    for: duration,
    annotations: z.object({ summary: z.string(), description: z.string() }),
    labels: z.record(z.string().regex(/^\w+$/), noDollar),
    isPaused: z.boolean(),
  })
  .strict()
  .refine((r) => r.data.some((q) => q.refId === r.condition), {
    message: "the condition must be one of the rule's refIds",
  })
  .refine(
    (r) =>
      r.data.every(
        (q) =>
          !("expression" in q.model) ||
          r.data.some(
            (p) => "expression" in q.model && p.refId === q.model.expression,
          ),
      ),
    { message: "an expression must read one of the rule's refIds" },
  );

export const alertingFileSchema = z
  .object({
    apiVersion: z.literal(1),
    groups: z
      .array(
        z
          .object({
            orgId: z.number().int().positive(),
            name: noDollar.min(1),
            folder: noDollar.min(1),
            interval: duration,
            rules: z.array(ruleSchema).min(1),
          })
          .strict(),
      )
      .min(1),
  })
  .strict();

export type AlertRule = z.infer<typeof ruleSchema>;
export type AlertQuery = AlertRule["data"][number];

export function alertingFiles(): string[] {
  return readdirSync(ALERTING_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
}

/** Every provisioned rule, parsed with the schema (throws with the file name on a bad file). */
export function loadAlertRules(): { file: string; rule: AlertRule }[] {
  return alertingFiles().flatMap((file) => {
    const raw = parse(
      readFileSync(join(ALERTING_DIR, file), "utf8"),
    ) as unknown;
    const parsed = alertingFileSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(`${file}: ${z.prettifyError(parsed.error)}`);
    return parsed.data.groups.flatMap((g) =>
      g.rules.map((rule) => ({ file, rule })),
    );
  });
}

/** The rule's ClickHouse query (the one its threshold reads). */
export function clickhouseQuery(
  rule: AlertRule,
): AlertQuery & { model: z.infer<typeof clickhouseModel> } {
  const q = rule.data.find((d) => "rawSql" in d.model);
  if (!q || !("rawSql" in q.model))
    throw new Error(`${rule.uid}: no ClickHouse query`);
  return q as AlertQuery & { model: z.infer<typeof clickhouseModel> };
}

/** The threshold the condition applies: the value must be above (gt) or below (lt) it. */
export function threshold(rule: AlertRule): {
  type: "gt" | "lt";
  value: number;
} {
  const c = rule.data.find((d) => d.refId === rule.condition)?.model;
  if (!c || !("conditions" in c))
    throw new Error(`${rule.uid}: the condition is not a threshold`);
  const e = c.conditions[0]?.evaluator;
  if (!e) throw new Error(`${rule.uid}: threshold without evaluator`);
  return { type: e.type, value: e.params[0] };
}
