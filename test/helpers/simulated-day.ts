// A simulator and a fresh database holding what a sync at NOON stored of it: the sessions of the
// lookback and, when asked, every directory stream. For tests that read what was stored.
import type { Config } from "../../src/config/index.js";
import { syncEntityStream } from "../../src/pipeline/entity-streams.js";
import { ENTITY_STREAMS } from "../../src/pipeline/names.js";
import { syncSessions } from "../../src/pipeline/session-sync.js";
import type { Simulator } from "../../src/simulator/index.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import * as simulator from "./simulator.js";

export interface SimulatedDay {
  sim: Simulator;
  config: Config;
  w: Warehouse;
}

export async function simulatedDay(options: {
  sessionsPerDay: number;
  historyDays: number;
  /** SESSIONHOUSE_INITIAL_LOOKBACK: how far back from NOON the sessions are synced. */
  lookback: string;
  /** Also sync every directory stream at NOON. */
  directory?: boolean;
  env?: Record<string, string>;
}): Promise<SimulatedDay> {
  const sim = await simulator.testSimulator({
    sessionsPerDay: options.sessionsPerDay,
    historyDays: options.historyDays,
  });
  const { config, w } = await simulator.simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: options.lookback,
    ...options.env,
  });
  const deps = simulator.runDeps(config, w);
  try {
    await simulator.run(deps, "sessions", (ctx) =>
      syncSessions(ctx, { nowMs: simulator.NOON }),
    );
    if (options.directory)
      for (const stream of ENTITY_STREAMS)
        await simulator.run(deps, stream, (ctx) =>
          syncEntityStream(ctx, stream, simulator.NOON),
        );
  } finally {
    await deps.api.close();
  }
  return { sim, config, w };
}
