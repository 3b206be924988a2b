// The rules of signals and alerts as pure functions: when a hit is history, which rules page,
// and how many alerts hits fire (one per actor while its hits come within ten minutes).
import { describe, expect, it } from "vitest";
import {
  ALERT_BUDGET_PER_DAY_PER_1000,
  ALERT_LOOKBACK_MS,
  alertCount,
  alertRate,
} from "../../../src/detections/alerts.js";
import {
  DEFAULT_HISTORICAL_AFTER_MS,
  historicalAfterMs,
  isHistorical,
  rulePages,
} from "../../../src/detections/history.js";
import { loadConfig } from "../../../src/config/index.js";
import { readFileSync } from "node:fs";

const HOUR = 3_600_000;
const MIN = 60_000;

describe("history", () => {
  it("a hit is historical when its event was older than the age on arrival, not at it", () => {
    const t = Date.UTC(2026, 9, 1);
    expect(isHistorical(t, t + HOUR + 1, HOUR)).toBe(true);
    expect(isHistorical(t, t + HOUR, HOUR)).toBe(false);
    expect(isHistorical(t, t + 5 * MIN, HOUR)).toBe(false);
    // A month's backfill loaded today: every event is history.
    expect(isHistorical(t, t + 58 * 24 * HOUR, HOUR)).toBe(true);
  });

  it("the age defaults to the sessions lookback, and the setting overrides it", () => {
    const base = {
      SESSIONHOUSE_API_URL: "http://127.0.0.1:1",
      SESSIONHOUSE_API_KEY: "k-0000",
    };
    expect(historicalAfterMs(loadConfig({ env: base }))).toBe(
      DEFAULT_HISTORICAL_AFTER_MS,
    );
    expect(
      historicalAfterMs(
        loadConfig({ env: { ...base, SESSIONHOUSE_LOOKBACK: "2h" } }),
      ),
    ).toBe(2 * HOUR);
    expect(
      historicalAfterMs(
        loadConfig({
          env: {
            ...base,
            SESSIONHOUSE_LOOKBACK: "2h",
            SESSIONHOUSE_DETECTIONS_HISTORICAL_AFTER: "1d",
          },
        }),
      ),
    ).toBe(24 * HOUR);
  });
});

describe("which rules page", () => {
  it("medium and above page, low and info are hunting rules, and `alert:` overrides", () => {
    const of = (
      severity: "info" | "low" | "medium" | "high" | "critical",
      alert?: boolean,
    ) => rulePages({ severity, alert });
    expect(
      ["info", "low", "medium", "high", "critical"].map((s) => of(s as "low")),
    ).toEqual([false, false, true, true, true]);
    expect(of("low", true)).toBe(true);
    expect(of("high", false)).toBe(false);
  });
});

describe("alerts from hits", () => {
  const hit = (actor: string, atMs: number, pages = true) => ({
    actor,
    atMs,
    pages,
  });

  it("a burst of one actor is one alert, however many hits", () => {
    const burst = Array.from({ length: 5000 }, (_x, i) =>
      hit("alice", i * 100),
    );
    expect(alertCount(burst)).toBe(1);
  });

  it("one alert per actor, a new one after a quiet ten minutes, none for hits that do not page", () => {
    expect(
      alertCount([
        hit("alice", 0),
        hit("bob", 0),
        hit("alice", ALERT_LOOKBACK_MS),
        hit("alice", 2 * ALERT_LOOKBACK_MS + 1),
        hit("carol", 0, false),
      ]),
    ).toBe(3);
  });

  it("the rate is per day and per 1,000 people, and docs/detections.md states the budget", () => {
    expect(alertRate(10, 2, 500)).toBe(10);
    const doc = readFileSync(
      new URL("../../../docs/detections.md", import.meta.url),
      "utf8",
    );
    expect(doc).toContain(
      `at most **${ALERT_BUDGET_PER_DAY_PER_1000} alerts a day per 1,000 people**`,
    );
  });
});
