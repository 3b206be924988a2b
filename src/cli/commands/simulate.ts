// `sessionhouse simulate`: the control-plane simulator as a standalone server, until stopped.
import { once } from "node:events";
import {
  parseClockSpec,
  parseFaultSpec,
  parseLatencySpec,
  parseMutationSpec,
  startSimulator,
} from "../../simulator/index.js";
import { UsageError } from "../../util/errors.js";
import type { GlobalOptions } from "../runtime.js";

interface SimulateOptions {
  port: number;
  host: string;
  seed: number;
  apiKey: string;
  clock: string;
  faults?: string;
  mutations?: string;
  latency?: string;
  sessionsPerDay?: number;
  historyDays?: number;
  brandMember: string;
  bench?: boolean;
  benchCacheMb?: number;
  replaySessions?: string;
}

/** A spec the simulator refuses is a usage error naming the option once, with its help. */
function usage<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const message = (err as Error).message;
    throw new UsageError(
      message.startsWith(`${what}:`) ? message : `${what}: ${message}`,
      {
        hint: `run sessionhouse simulate --help for what ${what} takes (and src/simulator/README.md)`,
      },
    );
  }
}

/** A replay file the simulator refuses (RangeError) is a usage error naming the option. */
async function usageAsync<T>(
  what: string,
  given: string | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (given !== undefined && err instanceof RangeError)
      throw new UsageError(`${what}: ${err.message}`);
    throw err;
  }
}

/** `simulate`: needs no configuration, only its own options. */
export async function runSimulateCommand(
  _globals: GlobalOptions,
  o: SimulateOptions,
): Promise<void> {
  await runSimulate(o);
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
  const mutations =
    o.mutations === undefined
      ? undefined
      : usage("--mutations", () => parseMutationSpec(o.mutations as string));
  const latency =
    o.latency === undefined
      ? undefined
      : usage("--latency", () => parseLatencySpec(o.latency as string));
  const sim = await usageAsync("--replay-sessions", o.replaySessions, () =>
    startSimulator({
      port: o.port,
      host: o.host,
      seed: o.seed,
      apiKey: o.apiKey,
      clock,
      brandMember: o.brandMember,
      ...(faults ? { faults } : {}),
      ...(mutations ? { mutations } : {}),
      ...(latency ? { latency } : {}),
      ...(o.sessionsPerDay ? { sessionsPerDay: o.sessionsPerDay } : {}),
      ...(o.historyDays ? { historyDays: o.historyDays } : {}),
      ...(o.bench ? { benchPages: true } : {}),
      ...(o.benchCacheMb
        ? { benchCacheBytes: o.benchCacheMb * 1024 * 1024 }
        : {}),
      ...(o.replaySessions === undefined
        ? {}
        : { replaySessions: o.replaySessions }),
    }),
  );
  out.write(
    `simulator listening on ${sim.url} (seed ${o.seed}, clock ${o.clock}${o.faults ? `, faults ${o.faults}` : ""}${o.mutations ? `, mutations ${o.mutations}` : ""})\n`,
  );
  await Promise.race([once(process, "SIGINT"), once(process, "SIGTERM")]);
  await sim.close();
  out.write(`simulator stopped after ${sim.stats().requests} requests\n`);
}
