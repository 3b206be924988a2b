// The simulator as a test fixture, and an independent reader of it (plain fetch, no exporter
// code) that tells what a sync should have stored.
import {
  SimClock,
  startSimulator,
  type Simulator,
} from "../../src/simulator/index.js";
import type { Config } from "../../src/config/index.js";
import { ControlPlaneApi } from "../../src/api/control-plane.js";
import type { Logger } from "../../src/util/logger.js";
import {
  withRun,
  type JobContext,
  type RunObserver,
} from "../../src/pipeline/context.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import { createLogger } from "../../src/util/logger.js";
import { migratedWarehouse, testConfig } from "./warehouse.js";
import { readSessions } from "./expected.js";

export const API_KEY = "sim-test-key-7f3a9c";

/** 2026-11-16 12:00 UTC, a Monday noon: a busy, fixed instant for deterministic tests. */
export const NOON = Date.UTC(2026, 10, 16, 12, 0, 0);

export async function testSimulator(
  options: Partial<Parameters<typeof startSimulator>[0]> & {
    atMs?: number;
  } = {},
): Promise<Simulator> {
  const { atMs, ...rest } = options;
  return startSimulator({
    port: 0,
    seed: 42,
    apiKey: API_KEY,
    clock: new SimClock({ mode: "fixed", atMs: atMs ?? NOON }),
    sessionsPerDay: 2000,
    historyDays: 30,
    ...rest,
  });
}

/** Every session the simulator serves for [fromMs, toMs), in order (the oracle's reader). */
export async function expectedSessions(
  sim: Simulator,
  fromMs: number,
  toMs: number,
): Promise<Record<string, unknown>[]> {
  return [...(await readSessions(sim, fromMs, toMs)).values()];
}

export function runDeps(
  config: Config,
  warehouse: Warehouse,
  extra: { logger?: Logger; signal?: AbortSignal; observer?: RunObserver } = {},
) {
  const logger = extra.logger ?? createLogger({ level: "silent" });
  return {
    config,
    warehouse,
    logger,
    api: ControlPlaneApi.fromConfig(config, logger),
    signal: extra.signal,
    observer: extra.observer,
  };
}

export async function run<T>(
  deps: ReturnType<typeof runDeps>,
  job: string,
  fn: (ctx: JobContext) => Promise<T>,
): Promise<T> {
  return withRun(deps, job, fn);
}

/**
 * A config pointing at a simulator (any URL: a proxy in front of one too), with a fresh, migrated
 * database; `env` adds or overrides settings (page size, windows, lookbacks).
 */
export async function simulatorWarehouse(
  url: string,
  env: Record<string, string> = {},
): Promise<{ config: Config; w: Warehouse }> {
  const config = await testConfig({
    SESSIONHOUSE_API_URL: url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_MAX_RPS: "1000",
    ...env,
  });
  return { config, w: await migratedWarehouse(config) };
}
