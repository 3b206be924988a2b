// Alerts, not signals: how many alerts a person receives for a rule's hits. The compiled Grafana
// alert (src/detections/grafana.ts) fires one instance per rule and actor while that actor has a
// hit that pages in its last ten minutes; a hit more than ten minutes after the previous one of
// the same actor starts a new alert. docs/detections.md, "Signals and alerts".
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
