// History is not news: the one rule that says whether a hit is historical, and which hits page.
// A hit whose event was older than the configured age when its data arrived is history loaded on
// purpose (a backfill of past days, the first sync of a new install, a session re-read long
// after it started): recorded and shown (the Detections dashboard, the reports, `detect run`),
// never paged. docs/detections.md, "Signals and alerts".
import type { Config } from "../config/index.js";
import type { Rule } from "./rule.js";

/**
 * The age past which an event is history when it arrives: `detections.historicalAfterMs` when
 * set, else the sessions lookback (what an incremental sync re-reads: anything older arrived
 * through a backfill or after an outage of the sync).
 */
export function historicalAfterMs(config: Config): number {
  return config.detections.historicalAfterMs ?? config.sessions.lookbackMs;
}

/** The age of history when no configuration is at hand: the sessions lookback's default. */
export const DEFAULT_HISTORICAL_AFTER_MS = 3_600_000;

/** True when the event was older than `afterMs` when it arrived. */
export function isHistorical(
  eventTimeMs: number,
  arrivedAtMs: number,
  afterMs: number,
): boolean {
  return arrivedAtMs - eventTimeMs > afterMs;
}

/** Severities whose rules page (compile to Grafana alerts) unless a rule says otherwise. */
const PAGING_SEVERITIES: ReadonlySet<string> = new Set([
  "medium",
  "high",
  "critical",
]);

/**
 * Whether a rule's hits may page a person: `alert:` in its file when given, else its severity
 * (medium and above page; low and info are hunting rules: recorded and listed, never paged).
 */
export function rulePages(rule: Pick<Rule, "alert" | "severity">): boolean {
  return rule.alert ?? PAGING_SEVERITIES.has(rule.severity);
}
