// ListLogAggregations over real HTTP. The simulator serves the route by default; registering it
// again through addRoute (which replaces it) checks the handler fits the server's route seam.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SimClock,
  startSimulator,
  type Simulator,
} from "../../../src/simulator/index.js";
import type { ListLogAggregationsResponse } from "../../../src/simulator/logs/aggregate.js";
import {
  createListLogAggregationsHandler,
  LIST_LOG_AGGREGATIONS_PATH,
} from "../../../src/simulator/logs/handler.js";
import { API_KEY, HOUR, T0, call, secs } from "../../helpers/simulator-call.js";

describe("ListLogAggregations over HTTP", () => {
  let sim: Simulator;
  const clock = SimClock.fixed(T0);

  beforeAll(async () => {
    sim = await startSimulator({
      apiKey: API_KEY,
      seed: 5,
      clock,
      historyDays: 7,
      sessionsPerDay: 2000,
    });
    sim.addRoute(
      LIST_LOG_AGGREGATIONS_PATH,
      createListLogAggregationsHandler(),
    );
  });
  afterAll(async () => {
    await sim.close();
  });

  const body = {
    startTimestamp: secs(T0 - 2 * HOUR),
    endTimestamp: secs(T0),
    histogramInterval: "30m",
    histogramGroupByFields: ["resource.technology"],
  };

  it("answers a Connect unary call with proto3 JSON", async () => {
    const r = await call(sim, "ListLogAggregations", body);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    const json = r.json as ListLogAggregationsResponse | undefined;
    expect(json?.numHits).toMatch(/^[1-9]\d*$/);
    const steps = json?.aggregations.logsOverTime ?? [];
    expect(steps.map((s) => s.datetime)).toEqual([
      "2026-11-04T10:00:00Z",
      "2026-11-04T10:30:00Z",
      "2026-11-04T11:00:00Z",
      "2026-11-04T11:30:00Z",
    ]);
    expect(steps.reduce((a, s) => a + (s.count ?? 0), 0)).toBe(
      Number(json?.numHits),
    );
    expect(json?.aggregations.resourceTechnologies?.length).toBeGreaterThan(0);
    // Same request, same clock: the same bytes.
    const again = await call(sim, "ListLogAggregations", body);
    expect(again.text).toBe(r.text);
  });

  it("sees more of an open window as the simulator clock advances", async () => {
    const open = { ...body, endTimestamp: secs(T0 + HOUR) };
    const before = await call(sim, "ListLogAggregations", open);
    clock.advance(HOUR);
    try {
      const after = await call(sim, "ListLogAggregations", open);
      expect(Number(after.json?.numHits)).toBeGreaterThan(
        Number(before.json?.numHits),
      );
    } finally {
      clock.advance(-HOUR);
    }
  });

  it("returns Connect errors for invalid requests", async () => {
    const r = await call(sim, "ListLogAggregations", {
      ...body,
      histogramGroupByFields: ["a.b", "c.d", "e.f", "g.h"],
    });
    expect(r.status).toBe(400);
    expect(r.json?.code).toBe("invalid_argument");
    expect(String(r.json?.message)).toMatch(/at most 3/);
    const noKey = await call(sim, "ListLogAggregations", body, { key: null });
    expect(noKey.json?.code).toBe("unauthenticated");
  });
});
