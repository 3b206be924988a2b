// Detections: every shipped rule over one day of 275,000 sessions that arrived in one window, as
// the detections job evaluates it (sessions generated as bench/dashboards.ts generates them).
import { findHits } from "../src/detections/query.js";
import { join } from "node:path";
import { loadRules } from "../src/detections/rule.js";
import { END_MS, generateSessions, openBench } from "./dashboards.js";
import { percentile } from "./harness.js";

const DAY = 86_400_000;
const RUNS = 5;

export interface RuleLatency {
  rule: string;
  p50: number;
  p95: number;
  hits: number;
}

export async function runDetections(
  dataDir: string,
  sessions: number,
): Promise<{ sessions: number; rules: RuleLatency[] }> {
  const { w } = await openBench(dataDir);
  try {
    await generateSessions(w, sessions, undefined, DAY);
    for (const t of [
      "sessions",
      "session_keys",
      "user_resource_first_seen",
      "user_active_days",
    ])
      await w.client.command({ query: `OPTIMIZE TABLE bench.${t} FINAL` });
    // The generator fetches each session a minute after it started: the whole day arrives in
    // this window.
    const window = {
      fromMs: END_MS - DAY,
      toMs: END_MS + 60_000,
      scope: "arrived" as const,
    };
    const clock = { nowMs: END_MS, historicalAfterMs: 3_600_000 };
    const out: RuleLatency[] = [];
    // The repository's rules (this file runs from a compiled copy elsewhere).
    const dir = join(process.env.SESSIONHOUSE_REPO_ROOT ?? ".", "detections");
    for (const rule of loadRules([dir])) {
      let hits = (await findHits(w, rule, window, clock)).length;
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        hits = (await findHits(w, rule, window, clock)).length;
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      out.push({
        rule: rule.id,
        p50: percentile(times, 0.5),
        p95: percentile(times, 0.95),
        hits,
      });
    }
    return { sessions, rules: out };
  } finally {
    await w.close();
  }
}
