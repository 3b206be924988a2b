// The `sessionhouse` command line: a thin layer that parses flags, builds the runtime and hands
// over to the pipeline, scheduler or simulator. Exit status: 0 done, 1 failed, 2 bad input.
import { readFileSync } from "node:fs";
import {
  Command,
  CommanderError,
  InvalidArgumentError,
  Option,
} from "commander";
import { ConfigError } from "../config/index.js";
import { withRun } from "../pipeline/context.js";
import { syncSessions } from "../pipeline/sessions.js";
import { reconcileSessions, recentRange } from "../pipeline/reconcile.js";
import { checkJob, syncAggregations } from "../pipeline/aggregations.js";
import { SessionhouseError, UsageError } from "../util/errors.js";
import { rememberedSecrets, scrubber } from "../util/logger.js";
import { parseInstant } from "../util/time.js";
import { migrate } from "../warehouse/migrate.js";
import { openWarehouse } from "../warehouse/client.js";
import { runDemo } from "./commands/demo.js";
import { QUERY_FORMATS, runQuery, type QueryFormat } from "./commands/query.js";
import { runSimulate } from "./commands/simulate.js";
import { registerRunCommand } from "./commands/run.js";
import { registerStatusCommand } from "./commands/status.js";
import { registerWindowsCommand } from "./commands/windows.js";
import {
  configFrom,
  loggerFor,
  openRuntime,
  type GlobalOptions,
} from "./runtime.js";
import { createProgressObserver } from "./progress.js";
import {
  aggregationName,
  SESSIONS_JOB,
  RECONCILE_JOB,
} from "../pipeline/names.js";

const VERSION = (
  JSON.parse(
    readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
  ) as { version: string }
).version;

function intArg(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `${name} must be a whole number from ${min} to ${max}`,
      );
    }
    return n;
  };
}

export function buildProgram(): Command {
  const program = new Command()
    .name("sessionhouse")
    .description(
      "Exports the sessions and log analytics of the data-access control plane into ClickHouse.\n" +
        "Configuration comes from the environment (SESSIONHOUSE_*, CLICKHOUSE_*) and an optional --config file.",
    )
    .version(VERSION)
    .option(
      "-c, --config <file>",
      "YAML or JSON config file (environment variables win over it)",
    )
    .option(
      "--log-level <level>",
      "fatal, error, warn, info (default), debug, trace or silent",
    )
    .showHelpAfterError(
      "(run sessionhouse --help for the commands and their options)",
    )
    .configureOutput({ outputError: (str, write) => write(str) })
    .exitOverride();

  const globals = (): GlobalOptions => program.opts<GlobalOptions>();

  program
    .command("demo")
    .description(
      "simulate a control plane, sync the last days into the embedded ClickHouse, and show a summary",
    )
    .option("--days <n>", "days of history to sync", intArg("--days", 1, 90), 7)
    .option(
      "--seed <n>",
      "seed of the simulated organisation",
      intArg("--seed", 0, 2 ** 31 - 1),
      1,
    )
    .option(
      "--sessions-per-day <n>",
      "activity of the simulated organisation",
      intArg("--sessions-per-day", 1, 10_000_000),
    )
    .action(
      async (o: { days: number; seed: number; sessionsPerDay?: number }) => {
        await runDemo(globals(), o);
      },
    );

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
    .option("--bench", "serve pre-built pages (benchmark mode)")
    .option(
      "--bench-cache-mb <n>",
      "memory for pre-built pages in benchmark mode",
      intArg("--bench-cache-mb", 1, 65_536),
      512,
    )
    .action(async (o: Parameters<typeof runSimulate>[0]) => {
      await runSimulate(o);
    });

  program
    .command("migrate")
    .description(
      "create or upgrade the ClickHouse tables (also done before every sync)",
    )
    .action(async () => {
      const config = configFrom(globals(), {}, { needsApi: false });
      const logger = loggerFor(config);
      const w = await openWarehouse(config);
      try {
        const r = await migrate(w, {
          retentionDays: config.clickhouse.retentionDays,
          logger,
        });
        process.stdout.write(
          `${w.database} at ${w.location}: ${r.applied.length} migration(s) applied, ${r.alreadyApplied} already in place\n`,
        );
      } finally {
        await w.close();
      }
    });

  const sync = program
    .command("sync")
    .description("sync one stream now, incrementally or as a backfill");
  sync
    .command("sessions")
    .description(
      "page ListSessionsV2 into the sessions table (continues from the checkpoint without --from)",
    )
    .option(
      "--from <time>",
      "backfill from this instant (2026-11-01, RFC 3339, Unix seconds, -7d)",
    )
    .option("--to <time>", "backfill up to this instant (default now)")
    .action(async (o: RangeFlags) => {
      const range = parseRange(o);
      const rt = await openRuntime(configFrom(globals()));
      try {
        const progress = createProgressObserver(rt.logger);
        const r = await withRun(
          { ...rt, observer: progress },
          SESSIONS_JOB,
          (ctx) => syncSessions(ctx, range),
        ).finally(() => progress.close());
        process.stdout.write(
          `sessions: ${r.rows} rows over ${r.windows} windows, ${r.deadLetters} dead-lettered, ${r.openRefreshed} open sessions re-read\n`,
        );
      } finally {
        await rt.close();
      }
    });

  sync
    .command("reconcile")
    .description(
      "list the last days again and store the sessions the incremental sync missed (late sessions); compares listed and stored counts per window",
    )
    .option(
      "--days <n>",
      "days before the sessions checkpoint (default sessions.reconcileDays)",
      intArg("--days", 1, 3650),
    )
    .option(
      "--from <time>",
      "reconcile from this instant instead (2026-11-01, RFC 3339, Unix seconds, -3d)",
    )
    .option("--to <time>", "reconcile up to this instant (default now)")
    .action(async (o: RangeFlags & { days?: number }) => {
      const range = parseRange(o);
      if (o.days !== undefined && range.fromMs !== undefined)
        throw new UsageError("give either --days or --from, not both", {
          hint: "--days counts back from the sessions checkpoint; --from/--to name a range",
        });
      const config = configFrom(globals());
      const days = o.days ?? config.sessions.reconcileDays;
      if (range.fromMs === undefined && days === 0)
        throw new UsageError(
          "sessions.reconcileDays is 0 (SESSIONHOUSE_RECONCILE_DAYS) and no range was given",
          { hint: "give --days N or --from T" },
        );
      const rt = await openRuntime(config);
      try {
        const progress = createProgressObserver(rt.logger);
        const r = await withRun(
          { ...rt, observer: progress },
          RECONCILE_JOB,
          async (ctx) =>
            reconcileSessions(
              ctx,
              range.fromMs === undefined
                ? await recentRange(ctx, days, range.nowMs)
                : {
                    fromMs: range.fromMs,
                    toMs: Math.min(range.toMs ?? range.nowMs, range.nowMs),
                  },
            ),
        ).finally(() => progress.close());
        process.stdout.write(
          `reconcile: ${r.windows} windows, ${r.missing} missing stored, ${r.differing} windows differing\n`,
        );
      } finally {
        await rt.close();
      }
    });

  sync
    .command("aggregations")
    .description(
      "fetch ListLogAggregations for every configured aggregation job (or one with --job)",
    )
    .option("--job <name>", "only this aggregation job")
    .option(
      "--from <time>",
      "backfill from this instant (2026-11-01, RFC 3339, Unix seconds, -30d)",
    )
    .option("--to <time>", "backfill up to this instant (default now)")
    .action(async (o: RangeFlags & { job?: string }) => {
      const range = parseRange(o);
      const config = configFrom(globals());
      const jobs = config.aggregations.jobs.filter((j) =>
        o.job ? j.name === o.job : j.enabled,
      );
      if (o.job && jobs.length === 0) {
        throw new UsageError(`there is no aggregation job named "${o.job}"`, {
          hint: `the configured jobs are: ${config.aggregations.jobs.map((j) => j.name).join(", ")}`,
        });
      }
      for (const job of jobs) checkJob(job);
      const rt = await openRuntime(config);
      try {
        for (const job of jobs) {
          const progress = createProgressObserver(rt.logger);
          const r = await withRun(
            { ...rt, observer: progress },
            aggregationName(job),
            (ctx) => syncAggregations(ctx, job, range),
          ).finally(() => progress.close());
          process.stdout.write(
            `${job.name}: ${r.rows} rows over ${r.windows} windows, ${r.deadLetters} dead-lettered${r.shrunk > 0 ? `, ${r.shrunk} shrunk (stored counts kept)` : ""}\n`,
          );
          if (r.poisoned.length > 0)
            process.stdout.write(
              `${job.name}: ${r.poisoned.length} poisoned window(s) hold the checkpoint: see \`sessionhouse windows list --job ${job.name}\`\n`,
            );
        }
      } finally {
        await rt.close();
      }
    });

  program
    .command("query")
    .description(
      'run SQL against the configured ClickHouse, e.g. query "SELECT count() FROM sessions FINAL"',
    )
    .argument("<sql>", "the SQL statement")
    .addOption(
      new Option("--format <format>", "output format")
        .choices(QUERY_FORMATS)
        .default("table"),
    )
    .action(async (sql: string, o: { format: QueryFormat }) => {
      const config = configFrom(globals(), {}, { needsApi: false });
      const w = await openWarehouse(config);
      try {
        await runQuery(w, sql, o.format);
      } finally {
        await w.close();
      }
    });

  registerRunCommand(program, globals);
  registerStatusCommand(program, globals);
  registerWindowsCommand(program, globals);

  return program;
}

interface RangeFlags {
  from?: string;
  to?: string;
}

/** --from/--to of a sync, checked before anything is opened. */
function parseRange(o: RangeFlags): {
  fromMs?: number;
  toMs?: number;
  nowMs: number;
} {
  const nowMs = Date.now();
  if (o.to !== undefined && o.from === undefined) {
    throw new UsageError("--to needs --from", {
      hint: "give the start of the range with --from",
    });
  }
  const fromMs =
    o.from === undefined ? undefined : parseInstant(o.from, "--from", nowMs);
  const toMs =
    o.to === undefined ? undefined : parseInstant(o.to, "--to", nowMs);
  if (fromMs !== undefined && toMs !== undefined && fromMs >= toMs) {
    throw new UsageError(`--from ${o.from} is not before --to ${o.to}`, {
      hint: "swap the two dates",
    });
  }
  if (fromMs !== undefined && fromMs > nowMs)
    throw new UsageError(`--from ${o.from} is in the future`);
  return {
    ...(fromMs !== undefined ? { fromMs } : {}),
    ...(toMs !== undefined ? { toMs } : {}),
    nowMs,
  };
}

/** Runs the CLI; returns the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  const scrub = scrubber([
    process.env.SESSIONHOUSE_API_KEY ?? "",
    process.env.CLICKHOUSE_PASSWORD ?? "",
  ]);
  const program = buildProgram();
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0.
      return err.exitCode === 0 ? 0 : 2;
    }
    // Also what the config turned out to hold (a key file, a config file): known by now.
    const write = (s: string) =>
      process.stderr.write(scrubber(rememberedSecrets())(scrub(s)));
    if (err instanceof SessionhouseError) {
      write(`error: ${err.message}\n`);
      if (err.hint) write(`hint: ${err.hint}\n`);
      return err instanceof ConfigError || err instanceof UsageError ? 2 : 1;
    }
    write(
      `error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}
