// `sessionhouse simulate`: the control-plane simulator as a standalone server, until stopped.
import { once } from "node:events";
import { Option, type Command } from "commander";
import {
  parseClockSpec,
  parseFaultSpec,
  parseLatencySpec,
  parseMutationSpec,
  startSimulator,
} from "../../simulator/index.js";
import { UsageError } from "../../util/errors.js";
import { intArg } from "../args.js";

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

export function registerSimulateCommand(program: Command): void {
  program
    .command("simulate")
    .description(
      "run the control-plane simulator (a local stand-in for the real API) until stopped",
    )
    .option(
      "--port <n>",
      "port; 0 picks a free one and prints it",
      intArg("--port", 0, 65_535),
      0,
    )
    .option("--host <address>", "address to bind", "127.0.0.1")
    .option(
      "--seed <n>",
      "seed of the simulated organisation",
      intArg("--seed", 0, 2 ** 31 - 1),
      1,
    )
    .addOption(
      new Option("--api-key <key>", "API key clients must send in X-API-KEY")
        .env("SIMULATOR_API_KEY")
        .makeOptionMandatory(),
    )
    .option(
      "--clock <spec>",
      "real, fixed:<RFC3339> or accelerated:<factor>[@<RFC3339>]",
      "real",
    )
    .option(
      "--faults <spec>",
      'injected faults, e.g. "all=0.02,seed=7" or "rate429=0.05,wrong-shape=0.01" (see src/simulator/README.md)',
    )
    .option(
      "--mutations <spec>",
      'mutation mode: answers that contradict one another read after read, e.g. "all=0.05,seed=7" or "vanish=0.1,duplicate-key=0.2" (see src/simulator/README.md)',
    )
    .option(
      "--sessions-per-day <n>",
      "average sessions a day",
      intArg("--sessions-per-day", 1, 10_000_000),
    )
    .option(
      "--history-days <n>",
      "days of history before the clock",
      intArg("--history-days", 1, 3650),
    )
    .option(
      "--brand-member <name>",
      "wire name of the session user's brand member",
      "formal",
    )
    .option(
      "--latency <spec>",
      'a remote service\'s pace: time to first byte, body rate per answer, answers at once, e.g. "400ms,20MB/s,4"',
    )
    .option(
      "--replay-sessions <file>",
      "serve these session records (JSON Lines, one raw API record a line) instead of generated sessions",
    )
    .option("--bench", "serve pre-built pages (benchmark mode)")
    .option(
      "--bench-cache-mb <n>",
      "memory for pre-built pages in benchmark mode",
      intArg("--bench-cache-mb", 1, 65_536),
      512,
    )
    .action(async (o: SimulateOptions) => {
      await runSimulate(o);
    });
}

function usage<T>(what: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(`${what}: ${(err as Error).message}`);
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
