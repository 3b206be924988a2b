// A provisioned alert rule evaluated on a real engine as Grafana evaluates it (for the integration
// tier: it runs SQL; the rules' files and schema are in alerts.ts).
import type { Warehouse } from "../../src/warehouse/index.js";
import { clickhouseQuery, threshold, type AlertRule } from "./alerts.js";
import { queryInterval, renderQuery } from "./grafana-sql.js";
import { run } from "./panels.js";

/** One alert instance of a table query: its labels (the string columns), its value, whether it fires. */
export interface AlertInstance {
  labels: Record<string, string>;
  value: number;
  firing: boolean;
}

/**
 * The rule evaluated at `atMs` as Grafana evaluates it: its query expanded over its relative
 * time range, run on `w` (its database the session's current one), one instance per row, the
 * threshold applied to the row's one number.
 */
export async function evaluateAlert(
  w: Warehouse,
  rule: AlertRule,
  atMs: number,
): Promise<AlertInstance[]> {
  const q = clickhouseQuery(rule);
  const range = {
    fromMs: atMs - q.relativeTimeRange.from * 1000,
    toMs: atMs - q.relativeTimeRange.to * 1000,
  };
  const sql = renderQuery(q.model.rawSql, {
    range,
    intervalMs: queryInterval(range),
    variables: [],
  });
  const result = await run(w, sql);
  const numeric = result.columns.filter((c) => /^(U?Int|Float)/.test(c.type));
  if (numeric.length !== 1)
    throw new Error(`${rule.uid}: ${numeric.length} numbers per row, not 1`);
  const { type, value: limit } = threshold(rule);
  return result.rows.map((row) => {
    const labels: Record<string, string> = {};
    let value = NaN;
    for (const [i, c] of result.columns.entries()) {
      if (c === numeric[0]) value = Number(row[i]);
      else if (/^(LowCardinality\()?String\)?$/.test(c.type))
        labels[c.name] = String(row[i]);
      // Grafana takes a label from a string column only.
      else
        throw new Error(
          `${rule.uid}: label ${c.name} is ${c.type}, not a string`,
        );
    }
    return {
      labels,
      value,
      firing: type === "gt" ? value > limit : value < limit,
    };
  });
}
