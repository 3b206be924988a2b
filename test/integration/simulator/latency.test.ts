// The simulator at a remote service's pace: the first byte after the set time, the body at the
// set rate, and no more answers at once than the set concurrency.
import { describe, expect, it } from "vitest";
import { parseLatencySpec } from "../../../src/simulator/index.js";
import { API_KEY, NOON, testSimulator } from "../../helpers/simulator.js";

describe("simulated latency", () => {
  it("parses a spec and names what it cannot read", () => {
    expect(parseLatencySpec("400ms,20MB/s,4")).toEqual({
      firstByteMs: 400,
      bytesPerSecond: 20_000_000,
      maxConcurrent: 4,
    });
    expect(parseLatencySpec("1.5s")).toEqual({
      firstByteMs: 1500,
      bytesPerSecond: 0,
      maxConcurrent: 0,
    });
    expect(() => parseLatencySpec("fast")).toThrow(/"fast" is not a time/);
  });

  it("waits for the first byte, paces the body and answers one request at a time", async () => {
    const sim = await testSimulator({
      latency: { firstByteMs: 150, bytesPerSecond: 400_000, maxConcurrent: 1 },
    });
    try {
      const ask = async () => {
        const started = performance.now();
        const res = await fetch(
          `${sim.url}/core.v1.SessionsService/ListSessionsV2`,
          {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-api-key": API_KEY,
            },
            body: JSON.stringify({
              limit: 1000,
              startTimestamp: String((NOON - 6 * 3_600_000) / 1000),
              endTimestamp: String(NOON / 1000),
            }),
          },
        );
        const bytes = (await res.arrayBuffer()).byteLength;
        return { ms: performance.now() - started, bytes };
      };
      const [a, b] = await Promise.all([ask(), ask()]);
      const one = 150 + ((a as { bytes: number }).bytes / 400_000) * 1000;
      expect(Math.min(a.ms, b.ms)).toBeGreaterThanOrEqual(one * 0.9);
      // One at a time: the second answer waited for the first.
      expect(Math.max(a.ms, b.ms)).toBeGreaterThanOrEqual(2 * one * 0.9);
    } finally {
      await sim.close();
    }
  });
});
