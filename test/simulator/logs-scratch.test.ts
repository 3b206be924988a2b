import { it } from "vitest";
import { createSessionGenerator } from "../../src/simulator/sessions.js";
import { createListLogAggregationsHandler } from "../../src/simulator/logs/handler.js";

it("bench", () => {
  const day = Date.UTC(2026, 10, 2);
  const gen = createSessionGenerator({ seed: 42, historyStartMs: day - 7 * 86400000 });
  const h = createListLogAggregationsHandler();
  const ctx = { nowMs: day + 86400000 + 3600000, generator: gen, seed: 42 };
  const body = { startTimestamp: String(day / 1000), endTimestamp: String(day / 1000 + 86400), histogramInterval: "5m", histogramGroupByFields: ["resource.technology", "user.type"] };
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    const r = h(body, ctx);
    const t1 = performance.now();
    console.log(i, (t1 - t0).toFixed(0), "ms", r.numHits, JSON.stringify(r).length);
  }
  const r = h({ ...body, mode: "field_aggregations_only" }, ctx);
  console.log(JSON.stringify(r.aggregations, null, 0).slice(0, 6000));
  const t0 = performance.now();
  h({ ...body, query: "resource.technology:postgres AND NOT user.type:machine" }, ctx);
  console.log("query", (performance.now() - t0).toFixed(0));
  console.log(process.memoryUsage().heapUsed / 1e6);
});
