// Every provisioned alert rule's query, expanded as the plugin's backend expands it over the
// rule's relative time range, runs against simulator data; each rule fires when what it watches
// happens, and not otherwise. The threshold is applied as Grafana's threshold expression applies
// it to a table: one alert instance per row, its string columns the labels, its number the value.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import { NOON } from "../../helpers/simulator.js";
import { loadAlertRules, type AlertRule } from "../../helpers/alerts.js";
import { evaluateAlert, type AlertInstance } from "../../helpers/alert-eval.js";
import {
  DAY_MS,
  DEMO_DAYS,
  demoWarehouse,
  INTRUDER_ADDRESSES,
  type DemoWarehouse,
} from "../../helpers/demo-fixture.js";
import { run, useDatabase } from "../../helpers/panels.js";

const rules = new Map(loadAlertRules().map(({ rule }) => [rule.uid, rule]));
let demo: DemoWarehouse;

beforeAll(async () => {
  demo = await demoWarehouse();
  await useDatabase(demo.warehouse);
}, 120_000);

afterAll(async () => {
  await demo.close();
});

function rule(uid: string): AlertRule {
  const r = rules.get(uid);
  if (!r) throw new Error(`no alert rule ${uid}`);
  return r;
}

const firing = (instances: AlertInstance[]) =>
  instances.filter((i) => i.firing).map((i) => i.labels);

/**
 * The test's own inserts name their deduplication token: the embedded session keeps the last
 * token the sync set, and an insert under it into the same table would be dropped.
 */
async function command(query: string): Promise<void> {
  await demo.warehouse.client.command({ query });
}

/** The rules the demo cannot make fire, and why. */
const SILENT_ON_DEMO: Readonly<Record<string, string>> = {
  "vanished-sessions-burst":
    "the demo's simulator makes no session vanish (that is a fault it injects on request) and the demo runs no session polls",
  "machine-account-human-address":
    "the demo's machines share an address with people only where both hop from an SSH or Kubernetes host, whose address the rule leaves out (a jump host is not a person's workstation)",
};

/** The column of each session rule's hit that names its actor, and that actor in sessions_enriched. */
const ACTOR: Readonly<Record<string, { field: string; column: string }>> = {
  "access-after-quiet-spell": { field: "user", column: "user_key" },
  "equation-group-c2": { field: "person_email", column: "person_email" },
  "external-address-session": { field: "person_email", column: "person_email" },
  "public-address-logon": { field: "person_email", column: "person_email" },
  "first-access-labelled-data": { field: "user", column: "user_key" },
  "llm-mcp-production": { field: "user", column: "user_key" },
  "machine-account-human-address": { field: "machine", column: "user_key" },
  "new-client-address": { field: "user", column: "user_key" },
  "new-user-production-resource": { field: "user", column: "user_key" },
  "privileged-native-off-hours": { field: "user", column: "user_key" },
  "session-under-suspension": { field: "person", column: "person_email" },
};

describe("the shipped detections on the demo", () => {
  it("every rule fires on the simulator's data, naming its session's actor", async () => {
    const shipped = loadRules([SHIPPED_RULES_DIR]).map((r) => r.id);
    const fired = await run(
      demo.warehouse,
      "SELECT rule_id, count() AS n FROM detection_hits FINAL GROUP BY rule_id ORDER BY rule_id",
    );
    expect(fired.rows.map(([id]) => String(id))).toEqual(
      shipped.filter((id) => !(id in SILENT_ON_DEMO)).sort(),
    );
    for (const [rule, { field, column }] of Object.entries(ACTOR)) {
      if (rule in SILENT_ON_DEMO) continue;
      // Every hit names the actor of its session (none for a session without a person), and at
      // least one hit names someone.
      const actors = await run(
        demo.warehouse,
        `SELECT countIf(h.fields['${field}'] != s.${column}) AS wrong,
                countIf(h.fields['${field}'] != '') AS named
         FROM detection_hits AS h FINAL
         INNER JOIN sessions_enriched AS s ON s.id = h.session_id
         WHERE h.rule_id = '${rule}'`,
      );
      const [wrong, named] = actors.rows[0] ?? [];
      expect(Number(wrong), `${rule}: hits naming another actor`).toBe(0);
      expect(Number(named), `${rule}: hits naming an actor`).toBeGreaterThan(0);
      // The actor the alerts group by is the session's user.
      const grouped = await run(
        demo.warehouse,
        `SELECT countIf(h.actor != s.user_key) FROM detection_hits AS h FINAL
         INNER JOIN sessions_enriched AS s ON s.id = h.session_id WHERE h.rule_id = '${rule}'`,
      );
      expect(Number(grouped.rows[0]?.[0]), `${rule}: actor`).toBe(0);
    }
  });

  it("many-resources-short-time finds exactly the people of the simulator's discovery sweeps", async () => {
    // The oracle: from the simulator's own sessions, each person (by e-mail) who reached more
    // than 10 resources in a 10-minute bucket of the synced days.
    const gen = demo.sim.generator;
    const buckets = new Map<string, Set<string>>();
    for (const s of gen.sessionsStartingIn(NOON - DEMO_DAYS * DAY_MS, NOON)) {
      const email = gen.index.userById.get(s.endUserId || s.userId)?.email;
      if (!email) continue;
      const key = `${email}|${Math.floor(s.startMs / 600_000)}`;
      const set = buckets.get(key) ?? new Set<string>();
      set.add(s.resourceId);
      buckets.set(key, set);
    }
    const sweepers = [...buckets]
      .filter(([, resources]) => resources.size > 10)
      .map(([key]) => key.split("|")[0] ?? "");
    expect(sweepers.length).toBeGreaterThan(0);
    const hits = await run(
      demo.warehouse,
      "SELECT DISTINCT fields['actor.user.email_addr'] FROM detection_hits FINAL WHERE rule_id = 'many-resources-short-time' ORDER BY 1",
    );
    expect(hits.rows.map(([e]) => String(e))).toEqual(
      [...new Set(sweepers)].sort(),
    );
  });

  it("equation-group-c2 finds exactly the sessions of the simulator's intruder addresses", async () => {
    // The oracle: the simulator's own sessions from those addresses in the synced days, and the
    // demo's copies of the first day's ones as history.
    const firstDayEnd = NOON - (DEMO_DAYS - 1) * DAY_MS;
    const expected = demo.sim.generator
      .sessionsStartingIn(NOON - DEMO_DAYS * DAY_MS, NOON)
      .filter((s) => INTRUDER_ADDRESSES.includes(s.clientIpAddress))
      .flatMap((s) => (s.startMs < firstDayEnd ? [s.id, `${s.id}-h`] : [s.id]));
    expect(expected.length).toBeGreaterThanOrEqual(
      DEMO_DAYS * INTRUDER_ADDRESSES.length,
    );
    const hits = await run(
      demo.warehouse,
      "SELECT session_id FROM detection_hits FINAL WHERE rule_id = 'equation-group-c2' ORDER BY 1",
    );
    expect(hits.rows.map(([id]) => String(id))).toEqual(expected.sort());
  });
});

/** The published filter of public-address-logon, written again for the oracle: private, loopback, link-local. */
function isPrivateOrLocal(address: string): boolean {
  const v4 = /^(\d+)\.(\d+)\./.exec(address);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 10 ||
      a === 127 ||
      (a === 172 && b >= 16 && b < 32) ||
      (a === 192 && b === 168) ||
      (a === 169 && b === 254)
    );
  }
  const v6 = address.toLowerCase();
  return v6 === "::1" || /^f[cd]/.test(v6) || /^fe[89ab]/.test(v6);
}

describe("a public Sigma rule on the demo", () => {
  it("public-address-logon finds exactly the sessions from public addresses", async () => {
    const firstDayEnd = NOON - (DEMO_DAYS - 1) * DAY_MS;
    const sessions = demo.sim.generator.sessionsStartingIn(
      NOON - DEMO_DAYS * DAY_MS,
      NOON,
    );
    const expected = sessions
      .filter(
        (s) => s.clientIpAddress !== "" && !isPrivateOrLocal(s.clientIpAddress),
      )
      .flatMap((s) => (s.startMs < firstDayEnd ? [s.id, `${s.id}-h`] : [s.id]));
    // Both kinds are in the demo's data: the oracle is not all or nothing.
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(sessions.length);
    const hits = await run(
      demo.warehouse,
      "SELECT session_id FROM detection_hits FINAL WHERE rule_id = 'public-address-logon' ORDER BY 1",
    );
    expect(hits.rows.map(([id]) => String(id))).toEqual(expected.sort());
  });
});

describe("alert rules", () => {
  it("fires for a stream whose checkpoint trails the clock, not for one that is current", async () => {
    const r = rule("sessionhouse-exporter-lag");
    // The demo's checkpoints stand at its noon, days before the wall clock.
    const before = await evaluateAlert(demo.warehouse, r, Date.now());
    expect(firing(before)).toContainEqual({ stream: "sessions" });
    await command(
      `INSERT INTO checkpoints SETTINGS insert_deduplication_token = 'alert-test-lag' VALUES ('sessions', now64(3) - INTERVAL 5 MINUTE, '', now64(3) + INTERVAL 1 SECOND)`,
    );
    const after = await evaluateAlert(demo.warehouse, r, Date.now());
    expect(firing(after)).not.toContainEqual({ stream: "sessions" });
    expect(
      after.find((i) => i.labels.stream === "sessions")?.value,
    ).toBeLessThan(400);
    // A checkpoint written later at an older position (a writer that lost its lease) does not
    // move the stream back: the greatest position counts, as for the exporter itself.
    await command(
      `INSERT INTO checkpoints SETTINGS insert_deduplication_token = 'alert-test-lag-stale' VALUES ('sessions', now64(3) - INTERVAL 3 DAY, '', now64(3) + INTERVAL 2 SECOND)`,
    );
    const stale = await evaluateAlert(demo.warehouse, r, Date.now());
    expect(firing(stale)).not.toContainEqual({ stream: "sessions" });
  });

  it("fires for a new dead letter and for a poisoned window", async () => {
    const r = rule("sessionhouse-dead-letters-or-poisoned");
    const before = firing(await evaluateAlert(demo.warehouse, r, Date.now()));
    expect(before).not.toContainEqual({
      job: "sessions",
      what: "dead letters",
    });
    await command(
      `INSERT INTO dead_letters SETTINGS insert_deduplication_token = 'alert-test-dead-letter' VALUES ('sessions', 'alert-test', 'ses_bad', 'startTime: expected an RFC 3339 timestamp', '{}', now64(3) - INTERVAL 1 MINUTE, '')`,
    );
    await command(
      `INSERT INTO stream_windows (job, window_start, window_end, state, attempts, last_error, updated_at)
       SETTINGS insert_deduplication_token = 'alert-test-poisoned' VALUES ('alert_test_job', now() - INTERVAL 2 HOUR, now() - INTERVAL 1 HOUR, 'poisoned', 5, 'unavailable', now64(3))`,
    );
    const after = firing(await evaluateAlert(demo.warehouse, r, Date.now()));
    expect(after).toContainEqual({ job: "sessions", what: "dead letters" });
    expect(after).toContainEqual({
      job: "alert_test_job",
      what: "poisoned windows",
    });
  });

  it("fires when three runs of a job failed within its range, not for two", async () => {
    const r = rule("sessionhouse-runs-failing");
    const insert = (job: string, n: number) =>
      command(
        `INSERT INTO runs (run_id, job, started_at, finished_at, status, error, updated_at)
         SETTINGS insert_deduplication_token = 'alert-test-${job}'
         SELECT concat('${job}-', toString(number)), '${job}', now64(3) - INTERVAL (number + 1) MINUTE,
                now64(3) - INTERVAL number MINUTE, 'failed', 'unavailable', now64(3)
         FROM numbers(${n})`,
      );
    await insert("alert_test_three", 3);
    await insert("alert_test_two", 2);
    const result = await evaluateAlert(demo.warehouse, r, Date.now());
    expect(firing(result)).toContainEqual({ job: "alert_test_three" });
    expect(firing(result)).not.toContainEqual({ job: "alert_test_two" });
    expect(result.find((i) => i.labels.job === "alert_test_two")?.value).toBe(
      2,
    );
  });

  it("a detection's alert fires once per actor with the count of its hits that page, not for history, an older hit or a hunting rule", async () => {
    const detections = [...rules.values()].filter((r) =>
      r.uid.startsWith("det-"),
    );
    // Hunting rules (low) have no alert: the public-address rules that fire on half the demo's
    // sessions page nobody.
    expect(rules.has("det-public-address-logon")).toBe(false);
    expect(rules.has("det-external-address-session")).toBe(false);
    // The demo's hits of the rules that page were recorded minutes ago (its data counts as
    // arrived live): the intruder's sessions fire one alert per actor, carrying the count.
    const c2 = rule("det-equation-group-c2");
    const instancesOf = async (r: AlertRule) =>
      Object.fromEntries(
        (await evaluateAlert(demo.warehouse, r, Date.now()))
          .filter((i) => i.firing)
          .map((i) => [String(i.labels.actor), i.value]),
      );
    const demoHits = await run(
      demo.warehouse,
      "SELECT actor, toFloat64(count()) FROM detection_hits FINAL WHERE rule_id = 'equation-group-c2' AND pages GROUP BY actor",
    );
    expect(demoHits.rows.length).toBeGreaterThan(0);
    expect(await instancesOf(c2)).toEqual(
      Object.fromEntries(demoHits.rows.map(([a, n]) => [String(a), Number(n)])),
    );
    // At the demo's noon no sessions had arrived yet (only the directory): nothing fires there.
    for (const r of detections)
      expect(
        firing(await evaluateAlert(demo.warehouse, r, NOON + 5 * 60_000)),
        r.uid,
      ).toEqual([]);
    const hit = (
      rule: string,
      key: string,
      actor: string,
      detectedAgo: string,
      flags = "false, true",
    ) =>
      `('${rule}', '${key}', '${key}', now64(3) - INTERVAL 1 HOUR, now64(3) - INTERVAL 1 HOUR, now64(3) - INTERVAL ${detectedAgo}, '${actor}', ${flags})`;
    await command(
      `INSERT INTO detection_hits (rule_id, hit_key, session_id, event_time, arrived_at, detected_at, actor, historical, pages)
       SETTINGS insert_deduplication_token = 'alert-test-hits'
       VALUES ${[
         hit("equation-group-c2", "ses_m1", "mallory", "1 MINUTE"),
         hit("equation-group-c2", "ses_m2", "mallory", "2 MINUTE"),
         hit("equation-group-c2", "ses_m3", "mallory", "3 MINUTE"),
         hit("equation-group-c2", "ses_t1", "trent", "4 MINUTE"),
         hit("equation-group-c2", "ses_o1", "oscar", "1 MINUTE", "true, false"),
         hit("equation-group-c2", "ses_m0", "mallory", "2 HOUR"),
         hit("many-resources-short-time", "ses_x1", "mallory", "1 MINUTE"),
       ].join(",\n")}`,
    );
    const after = await instancesOf(c2);
    expect([after.mallory, after.trent, after.oscar]).toEqual([
      3,
      1,
      undefined,
    ]);
    // Another rule's alert fires for exactly its own hits.
    const other = rule("det-many-resources-short-time");
    expect((await instancesOf(other)).mallory).toBe(1);
  });

  it("every rule's query runs over its own range, now and at the demo's noon", async () => {
    for (const r of rules.values())
      for (const at of [Date.now(), NOON])
        await evaluateAlert(demo.warehouse, r, at);
  });
});
