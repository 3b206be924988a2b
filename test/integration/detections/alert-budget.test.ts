// The alert budget on an ordinary slice of the simulated organisation (no intruder option): the
// shipped rules that page fire at most ALERT_BUDGET_PER_DAY_PER_1000 alerts a day per 1,000
// people, replayed as if the sessions had arrived live; and every scenario the simulator can
// inject (intruder addresses, discovery sweeps) still fires an alert. The fortnight is measured
// by `npm run bench` (bench/alerts.ts); this holds the budget on two days.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALERT_BUDGET_PER_DAY_PER_1000,
  alertRate,
  alertVolume,
  type RuleVolume,
} from "../../../src/detections/alerts.js";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import { ENTITY_STREAMS } from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { INTRUDER_ADDRESSES } from "../../helpers/demo-fixture.js";
import * as simulator from "../../helpers/simulator.js";

const DAY_MS = 86_400_000;
const DAYS = 2;
const FROM = simulator.NOON - DAYS * DAY_MS;
const rules = loadRules([SHIPPED_RULES_DIR]);

interface Org {
  sim: Simulator;
  w: Warehouse;
  volume: RuleVolume[];
}

/** The simulator's organisation over DAYS before NOON, synced with its directory, and each rule's volume. */
async function org(
  options: Parameters<typeof simulator.testSimulator>[0],
): Promise<Org> {
  const sim = await simulator.testSimulator({
    sessionsPerDay: 10_000,
    ...options,
  });
  const { config, w } = await simulator.simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: `${DAYS}d`,
  });
  const deps = simulator.runDeps(config, w);
  try {
    await simulator.run(deps, "sessions", (ctx) =>
      syncSessions(ctx, { nowMs: simulator.NOON }),
    );
    for (const stream of ENTITY_STREAMS)
      await simulator.run(deps, stream, (ctx) =>
        syncEntityStream(ctx, stream, simulator.NOON),
      );
  } finally {
    await deps.api.close();
  }
  return { sim, w, volume: await alertVolume(w, rules, FROM, simulator.NOON) };
}

let normal: Org;
let intruded: Org;

beforeAll(async () => {
  normal = await org({});
  // The organisation with every scenario the simulator injects for the detections, as the
  // demo has it (test/helpers/demo-fixture.ts): a daily session from each Equation Group C2
  // address, a daily discovery sweep.
  intruded = await org({
    sessionsPerDay: 2000,
    intruderAddresses: INTRUDER_ADDRESSES,
    discoverySweeps: true,
  });
}, 300_000);

afterAll(async () => {
  for (const o of [normal, intruded]) {
    await o.w.close();
    await o.sim.close();
  }
});

const volumeOf = (o: Org, rule: string): RuleVolume => {
  const v = o.volume.find((x) => x.rule === rule);
  if (!v) throw new Error(`no rule ${rule}`);
  return v;
};

describe("the alert budget", () => {
  it("the shipped rules that page stay within the budget on an ordinary two days", () => {
    const people = normal.sim.generator.index.humans.length;
    const alerts = normal.volume.reduce((n, v) => n + v.alerts, 0);
    const perRule = normal.volume
      .filter((v) => v.alerts > 0)
      .map((v) => `${v.rule} ${v.alerts}`)
      .join(", ");
    expect(
      alertRate(alerts, DAYS, people),
      `${alerts} alerts in ${DAYS} days for ${people} people: ${perRule}`,
    ).toBeLessThanOrEqual(ALERT_BUDGET_PER_DAY_PER_1000);
    // The hunting rules still record what they find: signals are not thrown away.
    expect(volumeOf(normal, "public-address-logon").hits).toBeGreaterThan(0);
    expect(volumeOf(normal, "public-address-logon").alerts).toBe(0);
  });

  it("every intruder scenario of the simulator still fires an alert", () => {
    const oracle = intruded.sim.generator
      .sessionsStartingIn(FROM, simulator.NOON)
      .filter((s) => INTRUDER_ADDRESSES.includes(s.clientIpAddress));
    expect(oracle.length).toBeGreaterThanOrEqual(
      DAYS * INTRUDER_ADDRESSES.length,
    );
    const c2 = volumeOf(intruded, "equation-group-c2");
    expect(c2.pages).toBe(true);
    expect(c2.hits).toBe(oracle.length);
    expect(c2.alerts).toBeGreaterThanOrEqual(DAYS);
    const sweeps = volumeOf(intruded, "many-resources-short-time");
    expect(sweeps.pages).toBe(true);
    expect(sweeps.alerts).toBeGreaterThan(0);
    // Without the scenarios, neither fires.
    expect(volumeOf(normal, "equation-group-c2").hits).toBe(0);
    expect(volumeOf(normal, "many-resources-short-time").hits).toBe(0);
  });
});
