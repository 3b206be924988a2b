// Alert volume: the simulator's organisation over an ordinary fortnight (no intruder option),
// synced with its directory; every shipped rule over it, replayed as if its sessions had arrived
// live (alertVolume): the hits (signals) of each rule, and the alerts of the rules that page.
import { join } from "node:path";
import type { Config } from "../src/config/index.js";
import { ControlPlaneApi } from "../src/api/control-plane.js";
import { alertVolume, type RuleVolume } from "../src/detections/alerts.js";
import { loadRules } from "../src/detections/rule.js";
import { withRun, type RunDeps } from "../src/pipeline/context.js";
import { syncEntityStream } from "../src/pipeline/entity-streams.js";
import { ENTITY_STREAMS } from "../src/pipeline/names.js";
import { syncSessions } from "../src/pipeline/session-sync.js";
import { createLogger } from "../src/util/logger.js";
import {
  humanUserIds,
  migrate,
  openWarehouse,
  type Warehouse,
} from "../src/warehouse/index.js";

export interface AlertBench {
  days: number;
  sessions: number;
  people: number;
  rules: RuleVolume[];
}

/** What a period's sync leaves to the part that measures it. */
export interface SyncedPeriod {
  w: Warehouse;
  deps: RunDeps;
  /** Sessions stored. */
  sessions: number;
}

/**
 * Opens the warehouse of `cfg`, migrates it, syncs the simulator's sessions of [fromMs, toMs) and
 * every entity stream as `run` stores them, then hands them to `measure`; closes both after it.
 */
export async function withSyncedPeriod<T>(
  cfg: Config,
  migrations: string,
  fromMs: number,
  toMs: number,
  measure: (p: SyncedPeriod) => Promise<T>,
): Promise<T> {
  const logger = createLogger({ level: "silent" });
  const w = await openWarehouse(cfg);
  const api = ControlPlaneApi.fromConfig(cfg, logger);
  try {
    await migrate(w, { dir: migrations });
    const deps = { config: cfg, api, warehouse: w, logger };
    const synced = await withRun(deps, "sessions", (ctx) =>
      syncSessions(ctx, { fromMs, toMs, nowMs: toMs, skipOpenRefresh: true }),
    );
    for (const stream of ENTITY_STREAMS)
      await withRun(deps, stream, (ctx) => syncEntityStream(ctx, stream, toMs));
    return await measure({ w, deps, sessions: synced.rows });
  } finally {
    await api.close();
    await w.close();
  }
}

export async function runAlerts(
  cfg: Config,
  migrations: string,
  fromMs: number,
  toMs: number,
): Promise<AlertBench> {
  return withSyncedPeriod(cfg, migrations, fromMs, toMs, async (p) => {
    // The repository's rules (this file runs from a compiled copy elsewhere).
    const dir = join(process.env.SESSIONHOUSE_REPO_ROOT ?? ".", "detections");
    return {
      days: (toMs - fromMs) / 86_400_000,
      sessions: p.sessions,
      people: (await humanUserIds(p.w)).length,
      rules: await alertVolume(p.w, loadRules([dir]), fromMs, toMs),
    };
  });
}
