// Alerts, not signals: how many alerts a person receives for a rule's hits. The compiled Grafana
// alert (src/detections/grafana.ts) fires one instance per rule and actor while that actor has a
// hit that pages in its last ten minutes; a hit more than ten minutes after the previous one of
// the same actor starts a new alert. docs/detections.md, "Signals and alerts".
import type { Warehouse } from "../warehouse/index.js";
import { rulePages } from "./history.js";
import { findHits } from "./query.js";
import type { Rule } from "./rule.js";
/** How far back the compiled alert reads: an actor's hits closer together than this are one alert. */
export const ALERT_LOOKBACK_MS = 600_000;

/** A hit as the alert counts it: whom it is about, whether it pages, when it was recorded. */
export interface AlertHit {
  readonly actor: string;
  readonly pages: boolean;
  /** detected_at live; the event time for a range replayed as if it had arrived live. */
  readonly atMs: number;
}

/**
 * The alerts that hits fire: per actor, the hits that page in time order, a new alert when one
 * comes more than ALERT_LOOKBACK_MS after the previous (the instance had resolved by then).
 */
export function alertCount(hits: readonly AlertHit[]): number {
  const byActor = new Map<string, number[]>();
  for (const h of hits) {
    if (!h.pages) continue;
    const times = byActor.get(h.actor) ?? [];
    times.push(h.atMs);
    byActor.set(h.actor, times);
  }
  let alerts = 0;
  for (const times of byActor.values()) {
    times.sort((a, b) => a - b);
    let last = -Infinity;
    for (const t of times) {
      if (t - last > ALERT_LOOKBACK_MS) alerts++;
      last = t;
    }
  }
  return alerts;
}

/** What the budget allows: alerts a day per 1,000 people (docs/detections.md, "Alert budget"). */
export const ALERT_BUDGET_PER_DAY_PER_1000 = 5;

export interface RuleVolume {
  readonly rule: string;
  readonly severity: string;
  readonly pages: boolean;
  /** Signals: every hit of the range. */
  readonly hits: number;
  /** Alerts the hits would fire had they arrived live (0 for a rule that does not page). */
  readonly alerts: number;
}

/**
 * Every rule over the sessions that started in [fromMs, toMs), replayed as if they had arrived
 * live (none historical): its hits, and the alerts they would fire (alertCount, at event time).
 */
export async function alertVolume(
  w: Warehouse,
  rules: readonly Rule[],
  fromMs: number,
  toMs: number,
): Promise<RuleVolume[]> {
  const out: RuleVolume[] = [];
  for (const rule of rules) {
    const hits = await findHits(
      w,
      rule,
      { fromMs, toMs, scope: "started" },
      { nowMs: toMs, historicalAfterMs: Number.MAX_SAFE_INTEGER },
    );
    out.push({
      rule: rule.id,
      severity: rule.severity,
      pages: rulePages(rule),
      hits: hits.length,
      alerts: alertCount(
        hits.map((h) => ({
          actor: h.actor,
          pages: h.pages,
          atMs: h.eventTimeMs,
        })),
      ),
    });
  }
  return out;
}

/** Alerts a day per 1,000 people. */
export function alertRate(
  alerts: number,
  days: number,
  people: number,
): number {
  return alerts / days / (people / 1000);
}
