// Values a session cannot be stored with (impossible calendar dates, years a DateTime64 cannot
// hold, negative durations), served by the simulator's bad-dates fault: each such record is a
// dead letter whose reason names the field, with its exact raw text and session id; every
// other session of the range is stored exactly as a fault-free twin serves it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  faultedDeadLetterDifferences,
  readSessions,
  sessionDifferences,
  storedDeadLetters,
  storedSessions,
} from "../../helpers/expected.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { SESSIONS_JOB } from "../../../src/pipeline/names.js";

const FROM = NOON - 24 * 3_600_000;
let sim: Simulator;
let clean: Simulator;
let w: Warehouse;

beforeAll(async () => {
  const faults = { rates: { badDates: 0.02 }, seed: 11 };
  sim = await testSimulator({ faults });
  clean = await testSimulator();
  const opened = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_PAGE_SIZE: "500",
  });
  w = opened.w;
  await run(runDeps(opened.config, w), SESSIONS_JOB, (ctx) =>
    syncSessions(ctx, {
      fromMs: FROM,
      toMs: NOON,
      nowMs: NOON,
      skipOpenRefresh: true,
    }),
  );
});
afterAll(async () => {
  await w.close();
  await sim.close();
  await clean.close();
});

describe("sessions with values no column can hold", () => {
  it("dead-letters exactly the records served with impossible values, each named by field", async () => {
    const faulted = sim.faultedRecords();
    // Every variant met: impossible date, year 1800, year 2400, negative duration.
    expect(new Set(faulted.map((f) => f.variant)).size).toBe(4);
    expect(
      faultedDeadLetterDifferences(
        await storedDeadLetters(w, SESSIONS_JOB),
        faulted,
      ),
    ).toEqual([]);
  });

  it("stores every other session as the fault-free service serves it", async () => {
    const expected = await readSessions(clean, FROM, NOON);
    const broken = new Set(sim.faultedRecords().map((f) => f.sessionId));
    expect(broken.size).toBeGreaterThan(10);
    const { rows } = await storedSessions(w);
    expect(sessionDifferences(expected, rows, broken)).toEqual([]);
  });
});
