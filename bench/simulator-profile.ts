// The simulator's session distributions, read from its own generator (src/simulator/sessions.ts)
// so that the scale scenario's generator (bench/dashboards.ts) follows them without a copy of
// its constants: the share of each technology, the durations, and the share of child sessions.
import { createSessionGenerator } from "../src/simulator/index.js";

const DAY = 86_400_000;

export interface SimulatorProfile {
  /** Technologies and their cumulative share of sessions, in 1/10000, the last at 10000. */
  technologies: string[];
  cumulative: number[];
  /** Session durations in ms at the quantiles 0.0005, 0.0015, …, 0.9995 (1,000 of them). */
  durationsMs: number[];
  /** Share of sessions that are a child of another. */
  childShare: number;
}

/** A week of the simulator (seed 1, 5,000 sessions a day) ending at `endMs`. */
export function simulatorProfile(endMs: number): SimulatorProfile {
  const gen = createSessionGenerator({
    seed: 1,
    sessionsPerDay: 5_000,
    historyStartMs: endMs - 8 * DAY,
  });
  const sessions = gen.sessionsStartingIn(endMs - 7 * DAY, endMs);
  const byTech = new Map<string, number>();
  let children = 0;
  for (const s of sessions) {
    const t = gen.index.resourceById.get(s.resourceId)?.technology ?? "";
    byTech.set(t, (byTech.get(t) ?? 0) + 1);
    if (s.parentSessionId !== "") children++;
  }
  const techs = [...byTech].sort((a, b) => b[1] - a[1]);
  let sum = 0;
  const cumulative = techs.map(([, n]) => {
    sum += n;
    return Math.round((10_000 * sum) / sessions.length);
  });
  cumulative[cumulative.length - 1] = 10_000;
  const durations = sessions.map((s) => s.durationMs).sort((a, b) => a - b);
  const durationsMs = Array.from(
    { length: 1000 },
    (_, i) =>
      durations[Math.floor(((i + 0.5) / 1000) * durations.length)] as number,
  );
  return {
    technologies: techs.map(([t]) => t),
    cumulative,
    durationsMs,
    childShare: children / sessions.length,
  };
}
