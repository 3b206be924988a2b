// Every exporter-health alert rule (dashboards/provisioning/alerting/sessionhouse.yaml) on a small
// scenario where it must fire and one where it must stay quiet, on one engine: checkpoints, runs
// and dead letters written by the product's own writers and real runs against the simulator (a
// refused key is the simulator refusing it), each rule's query expanded as Grafana expands it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncStream } from "../../../src/pipeline/streams.js";
import {
  backfillStream,
  detectionStream,
  SESSIONS_STREAM,
} from "../../../src/pipeline/names.js";
import { plannedSchedules, planJobs } from "../../../src/scheduler/jobs.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  insertDeadLetters,
  recordJobSchedules,
  recordRun,
  writeCheckpoint,
  type Warehouse,
} from "../../../src/warehouse/index.js";
import { loadAlertRules, type AlertRule } from "../../helpers/alerts.js";
import { evaluateAlert, type AlertInstance } from "../../helpers/alert-eval.js";
import { loadDashboards } from "../../helpers/dashboards.js";
import { panelSql, run, useDatabase } from "../../helpers/panels.js";
import {
  run as withRun,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";

const FILE = "sessionhouse.yaml";
const HOUR_MS = 3_600_000;
const rules = new Map(
  loadAlertRules()
    .filter((r) => r.file === FILE)
    .map(({ rule }) => [rule.uid, rule]),
);

let sim: Simulator;
let config: Config;
let w: Warehouse;
const insert = { retries: 0 };

beforeAll(async () => {
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  sim = await testSimulator({ atMs: now, historyDays: 1, sessionsPerDay: 50 });
  ({ config, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_MAX_RETRIES: "0",
  }));
  await useDatabase(w);
}, 120_000);

afterAll(async () => {
  await w?.close();
  await sim?.close();
});

function rule(uid: string): AlertRule {
  const r = rules.get(uid);
  if (!r) throw new Error(`no alert rule ${uid} in ${FILE}`);
  return r;
}

/**
 * Grafana's next evaluation: a second on, as $__timeFilter compares whole seconds and what was
 * written in this second would fall after the range's end.
 */
const nextEvaluation = () => Date.now() + 1_000;

const firingNow = async (uid: string): Promise<AlertInstance[]> =>
  (await evaluateAlert(w, rule(uid), nextEvaluation())).filter((i) => i.firing);

/** A run of a stream as `run` makes it, with this API key: its row in runs, failed or not. */
async function syncWithKey(
  stream: "identity_links" | "inventory",
  key: string,
) {
  const deps = runDeps({ ...config, api: { ...config.api, apiKey: key } }, w);
  try {
    await withRun(deps, stream, (ctx) => syncStream(ctx, stream, {}));
    return "succeeded";
  } catch {
    return "failed";
  } finally {
    await deps.api.close();
  }
}

/** What each rule is tested with here; a rule of the file without one fails the first test. */
const TESTED = [
  "sessionhouse-exporter-lag",
  "sessionhouse-dead-letters-or-poisoned",
  "sessionhouse-runs-failing",
  "sessionhouse-api-key-refused",
];

/** The SQL of the "Lag per stream" panel over the hour before `now`, every job selected. */
function lagPanelSql(now: number): string | undefined {
  const board = loadDashboards().find((d) => d.file === "exporter-health.json");
  const panel = board?.dashboard.panels.find(
    (p) => p.title === "Lag per stream",
  );
  if (!panel) throw new Error("no Lag per stream panel");
  return panelSql(panel, { fromMs: now - HOUR_MS, toMs: now }, [
    { name: "job", current: ["$__all"], options: [] },
  ])[0];
}

describe("exporter-health alert rules", () => {
  it("each has its scenarios here", () => {
    expect([...rules.keys()].sort()).toEqual([...TESTED].sort());
  });

  it("lag: fires for a live stream two hours behind, never for a finished backfill", async () => {
    const now = Date.now();
    const backfill = backfillStream(
      SESSIONS_STREAM,
      now - 40 * 24 * HOUR_MS,
      now - 30 * 24 * HOUR_MS,
    );
    await writeCheckpoint(w, SESSIONS_STREAM, now - 3 * HOUR_MS, {}, insert);
    await writeCheckpoint(w, "aggregations.tech", now - 5 * 60_000, {}, insert);
    // Finished: its position is its range's end, thirty days ago.
    await writeCheckpoint(w, backfill, now - 30 * 24 * HOUR_MS, {}, insert);
    const all = await evaluateAlert(w, rule("sessionhouse-exporter-lag"), now);
    expect(all.filter((i) => i.firing).map((i) => i.labels)).toEqual([
      { stream: SESSIONS_STREAM },
    ]);
    expect(all.map((i) => i.labels.stream).sort()).toEqual(
      ["aggregations.tech", SESSIONS_STREAM].sort(),
    );
    // The panel shows the same streams, the backfill not among them.
    const sql = lagPanelSql(now);
    const rows = (await run(w, sql ?? "")).rows.map((r) => String(r[0]));
    expect(rows).toEqual([SESSIONS_STREAM, "aggregations.tech"]);
    // Caught up: quiet.
    await writeCheckpoint(w, SESSIONS_STREAM, Date.now() - 60_000, {}, insert);
    expect(await firingNow("sessionhouse-exporter-lag")).toEqual([]);
  });

  it("lag: judges each stream against its job's schedule: a daily directory stream read 20 hours ago is quiet, 30 hours ago fires", async () => {
    // The schedules as `run` records them, the defaults: inventory daily, detections each minute.
    const plans = planJobs(config);
    await recordJobSchedules(w, plannedSchedules(plans), insert);
    expect(plans.find((p) => p.name === "inventory")?.schedule).toBe(
      "53 3 * * *",
    );
    const now = Date.now();
    const rule3h = detectionStream("health-three-hours");
    await writeCheckpoint(w, "inventory", now - 30 * HOUR_MS, {}, insert);
    await writeCheckpoint(w, rule3h, now - 3 * HOUR_MS, {}, insert);
    const firing = async () =>
      (await firingNow("sessionhouse-exporter-lag"))
        .map((i) => i.labels.stream)
        .sort();
    expect(await firing()).toEqual(["inventory", rule3h].sort());
    // Read again twenty hours ago: within its day, quiet; the rule's stream (each minute) still fires.
    await writeCheckpoint(w, "inventory", now - 20 * HOUR_MS, {}, insert);
    expect(await firing()).toEqual([rule3h]);
    // The panel reads the same: the daily stream 0 behind its schedule, the rule's about 3 hours.
    const sql = lagPanelSql(now);
    const lag = new Map(
      (await run(w, sql ?? "")).rows.map((r) => [String(r[0]), Number(r[1])]),
    );
    expect(lag.get("inventory")).toBe(0);
    expect(lag.get(rule3h)).toBeGreaterThan(3 * 3600 - 120);
    // Caught up: quiet again.
    await writeCheckpoint(w, rule3h, Date.now() - 60_000, {}, insert);
    expect(await firing()).toEqual([]);
  });

  it("API key refused: fires for a job whose last run the control plane refused, not once the key works nor for a 5xx", async () => {
    expect(await syncWithKey("identity_links", "wrong-key-0000000000")).toBe(
      "failed",
    );
    expect(await syncWithKey("inventory", "wrong-key-0000000000")).toBe(
      "failed",
    );
    expect(
      (await firingNow("sessionhouse-api-key-refused")).map((i) => i.labels),
    ).toEqual([{ job: "identity_links" }, { job: "inventory" }]);
    expect(await syncWithKey("inventory", config.api.apiKey)).toBe("succeeded");
    expect(
      (await firingNow("sessionhouse-api-key-refused")).map((i) => i.labels),
    ).toEqual([{ job: "identity_links" }]);
    // A failure that is not about the key: the service failing.
    await recordRun(
      w,
      {
        runId: "health-5xx",
        job: "clouds",
        startedAtMs: Date.now() - 60_000,
        finishedAtMs: Date.now() - 30_000,
        status: "failed",
        pages: 0,
        rowsInserted: 0,
        deadLetters: 0,
        retries: 0,
        error:
          "CloudsService/ListClouds: unavailable (HTTP 503): try later (gave up after 1 try)",
      },
      insert,
    );
    const all = await evaluateAlert(
      w,
      rule("sessionhouse-api-key-refused"),
      nextEvaluation(),
    );
    expect(all.find((i) => i.labels.job === "clouds")).toMatchObject({
      firing: false,
      value: 0,
    });
  });

  it("runs failing: fires for three failed runs of a job in its range, not for two", async () => {
    const failRuns = (job: string, n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          recordRun(
            w,
            {
              runId: `${job}-${i}`,
              job,
              startedAtMs: Date.now() - (i + 2) * 60_000,
              finishedAtMs: Date.now() - (i + 1) * 60_000,
              status: "failed",
              pages: 0,
              rowsInserted: 0,
              deadLetters: 0,
              retries: 0,
              error: "unavailable",
            },
            insert,
          ),
        ),
      );
    await failRuns("health_three", 3);
    await failRuns("health_two", 2);
    const labels = (await firingNow("sessionhouse-runs-failing")).map(
      (i) => i.labels.job,
    );
    expect(labels).toContain("health_three");
    expect(labels).not.toContain("health_two");
  });

  it("dead letters: fires for a dead letter in its range, not for an older one", async () => {
    const letter = (id: string) => ({
      recordId: id,
      reason: "startTime: expected an RFC 3339 timestamp",
      raw: "{}",
    });
    // Seen two hours ago, before the rule's fifteen minutes.
    await w.client.command({
      query: `INSERT INTO dead_letters SETTINGS insert_deduplication_token = 'health-old-letter' VALUES ('health_old', 'h-old', 'ses_old', 'bad', '{}', now64(3) - INTERVAL 2 HOUR, 'r-old')`,
    });
    await insertDeadLetters(
      w,
      { job: "health_new", runId: "r-new" },
      [letter("ses_new")],
      insert,
    );
    const labels = (
      await firingNow("sessionhouse-dead-letters-or-poisoned")
    ).map((i) => i.labels);
    expect(labels).toContainEqual({ job: "health_new", what: "dead letters" });
    expect(labels).not.toContainEqual({
      job: "health_old",
      what: "dead letters",
    });
  });
});
