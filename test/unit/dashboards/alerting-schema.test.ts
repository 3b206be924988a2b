// The alert rules are valid for Grafana's alerting file provisioning (alerts.ts), query the
// provisioned ClickHouse data source, and use only what the plugin's backend expands: alert
// queries have no dashboard variables and no $__conditionalAll (the frontend's macro).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  alertingFiles,
  clickhouseQuery,
  loadAlertRules,
} from "../../helpers/alerts.js";
import { REPO_ROOT, variableReferences } from "../../helpers/dashboards.js";
import { PLUGIN_MACROS } from "../../helpers/grafana-sql.js";

const rules = loadAlertRules();

describe("alert rules", () => {
  it("are provisioned in dashboards/provisioning/alerting, with unique uids and titles", () => {
    expect(alertingFiles().length).toBeGreaterThan(0);
    const uids = rules.map((r) => r.rule.uid);
    expect(new Set(uids).size).toBe(uids.length);
    const titles = rules.map((r) => r.rule.title);
    expect(new Set(titles).size).toBe(titles.length);
  });

  it("cover the exporter's health, and every detection through the hits it recorded", () => {
    const sql = rules.map((r) => clickhouseQuery(r.rule).model.rawSql);
    for (const table of [
      "checkpoints",
      "dead_letters",
      "stream_windows",
      "runs",
      "detection_hits",
    ])
      expect(
        sql.some((s) => new RegExp(`\\bFROM ${table}\\b`).test(s)),
        table,
      ).toBe(true);
  });

  it("query the ClickHouse data source as provisioned", () => {
    const ds = parse(
      readFileSync(
        join(REPO_ROOT, "dashboards/provisioning/datasources/clickhouse.yaml"),
        "utf8",
      ),
    ) as { datasources: { uid: string }[] };
    const uid = ds.datasources[0]?.uid;
    expect(uid).toBeDefined();
    for (const { rule } of rules)
      expect(clickhouseQuery(rule).datasourceUid, rule.uid).toBe(uid);
  });

  it.each(rules.map((r) => [r.rule.uid, r.rule] as const))(
    "%s uses only the plugin's backend macros",
    (_uid, rule) => {
      const sql = clickhouseQuery(rule).model.rawSql;
      for (const name of variableReferences(sql))
        expect(
          name.startsWith("__") && PLUGIN_MACROS.has(name.slice(2)),
          `$${name}`,
        ).toBe(true);
    },
  );
});
