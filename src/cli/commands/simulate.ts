// `sessionhouse simulate`: the control-plane simulator as a standalone server, until stopped.
import { once } from "node:events";
import {
  parseClockSpec,
  parseFaultSpec,
  startSimulator,
} from "../../simulator/index.js";
import { UsageError } from "../../util/errors.js";

export interface SimulateOptions {
  port: number;
  host: string;
  seed: number;
  apiKey: string;
  clock: string;
  faults?: string;
  sessionsPerDay?: number;
  historyDays?: number;
  brandMember: string;
  bench?: boolean;
  benchCacheMb?: number;
}

function usage<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(`${what}: ${(err as Error).message}`);
  }
}

export async function runSimulate(
  o: SimulateOptions,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const clock = usage("--clock", () => parseClockSpec(o.clock));
  const faults =
    o.faults === undefined
      ? undefined
      : usage("--faults", () => parseFaultSpec(o.faults as string));
  const sim = await startSimulator({
    port: o.port,
    host: o.host,
    seed: o.seed,
    apiKey: o.apiKey,
    clock,
    brandMember: o.brandMember,
    ...(faults ? { faults } : {}),
    ...(o.sessionsPerDay ? { sessionsPerDay: o.sessionsPerDay } : {}),
    ...(o.historyDays ? { historyDays: o.historyDays } : {}),
    ...(o.bench ? { benchPages: true } : {}),
    ...(o.benchCacheMb
      ? { benchCacheBytes: o.benchCacheMb * 1024 * 1024 }
      : {}),
  });
  out.write(
    `simulator listening on ${sim.url} (seed ${o.seed}, clock ${o.clock}${o.faults ? `, faults ${o.faults}` : ""})\n`,
  );
  await Promise.race([once(process, "SIGINT"), once(process, "SIGTERM")]);
  await sim.close();
  out.write(`simulator stopped after ${sim.stats().requests} requests\n`);
}
