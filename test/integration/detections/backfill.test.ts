// History is not news: a backfill of past days records its hits as historical and pages nobody.
// `sync sessions --from --to` over days with intruder sessions ends with one line per rule (its
// historical hits), and after the detections job has read what the backfill stored, no compiled
// Grafana alert fires: the hits are signals (listed), not alerts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateRules } from "../../../src/detections/evaluate.js";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  clickhouseQuery,
  loadAlertRules,
  threshold,
} from "../../helpers/alerts.js";
import {
  mainInProcess,
  type InProcessResult,
} from "../../helpers/cli-in-process.js";
import { INTRUDER_ADDRESSES } from "../../helpers/demo-fixture.js";
import { queryInterval, renderQuery } from "../../helpers/grafana-sql.js";
import { run, useDatabase } from "../../helpers/panels.js";
import * as simulator from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  testConfig,
  testDataDir,
} from "../../helpers/warehouse.js";

const DAY_MS = 86_400_000;
const FROM = simulator.NOON - 3 * DAY_MS;
const TO = simulator.NOON - DAY_MS;

let sim: Simulator;
let w: Warehouse;
let sync: InProcessResult;

beforeAll(async () => {
  sim = await simulator.testSimulator({
    intruderAddresses: INTRUDER_ADDRESSES,
    discoverySweeps: true,
  });
  const config = await testConfig({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: simulator.API_KEY,
  });
  // Migrated, then closed: the CLI opens the data directory itself.
  await (await migratedWarehouse(config)).close();
  sync = await mainInProcess(
    {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: simulator.API_KEY,
      SESSIONHOUSE_DATA_DIR: testDataDir(),
      CLICKHOUSE_DATABASE: config.clickhouse.database,
      SESSIONHOUSE_LOG_LEVEL: "silent",
    },
    "sync",
    "sessions",
    "--from",
    new Date(FROM).toISOString(),
    "--to",
    new Date(TO).toISOString(),
  );
  w = await migratedWarehouse(config);
  // The detections job of `run`, its first evaluation: every rule over what arrived in the
  // last day, the backfill's sessions included.
  await evaluateRules(w, loadRules([SHIPPED_RULES_DIR]), {
    insert: { retries: 0 },
    initialLookbackMs: DAY_MS,
    nowMs: Date.now(),
  });
}, 180_000);

afterAll(async () => {
  await w.close();
  await sim.close();
});

describe("a backfill", () => {
  it("ends with one line per rule: its historical hits", () => {
    expect(sync.stderr).toBe("");
    expect(sync.status).toBe(0);
    const intruders = sim.generator
      .sessionsStartingIn(FROM, TO)
      .filter((s) => INTRUDER_ADDRESSES.includes(s.clientIpAddress));
    expect(intruders.length).toBeGreaterThan(0);
    expect(sync.stdout).toContain(
      `detections: equation-group-c2: ${intruders.length} historical hits\n`,
    );
    const lines = sync.stdout
      .split("\n")
      .filter((l) => l.startsWith("detections: "));
    expect(lines.length).toBeGreaterThan(10);
    for (const l of lines)
      expect(l).toMatch(/^detections: [\w-]+: \d+ historical hits?$/);
  });

  it("records every hit as historical, and no compiled alert fires", async () => {
    const hits = await run(
      w,
      `SELECT rule_id, count(), countIf(historical), countIf(pages) FROM ${w.database}.detection_hits FINAL GROUP BY rule_id ORDER BY rule_id`,
    );
    const byRule = new Map(
      hits.rows.map(([r, ...n]) => [String(r), n.map(Number)]),
    );
    // The intruders' sessions are recorded, shown, and marked history.
    expect(byRule.get("equation-group-c2")?.[0]).toBeGreaterThan(0);
    for (const [rule, [n, historical, pages]] of byRule) {
      expect(historical, rule).toBe(n);
      expect(pages, rule).toBe(0);
    }
    const nowMs = Date.now();
    await useDatabase(w);
    for (const { rule } of loadAlertRules().filter(
      ({ file }) => file === "detections.yaml",
    )) {
      const q = clickhouseQuery(rule);
      const range = {
        fromMs: nowMs - q.relativeTimeRange.from * 1000,
        toMs: nowMs,
      };
      const sql = renderQuery(q.model.rawSql, {
        range,
        intervalMs: queryInterval(range),
        variables: [],
      });
      const result = await run(w, sql);
      const { value } = threshold(rule);
      const firing = result.rows.filter((row) =>
        row.some((v) => typeof v === "number" && v > value),
      );
      expect(firing, rule.uid).toEqual([]);
    }
  });
});
