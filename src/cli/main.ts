// The `sessionhouse` command line: a thin layer that parses flags, builds the runtime and hands
// over to the pipeline, scheduler or simulator. Exit status: 0 done, 1 failed, 2 bad input.
import { Command, CommanderError } from "commander";
import { ConfigError, secretsOfEnvironment } from "../config/index.js";
import { SessionhouseError, UsageError } from "../util/errors.js";
import { VERSION } from "../util/version.js";
import { endQuietlyOnBrokenPipe } from "../util/broken-pipe.js";
import { rememberedSecrets, scrubber } from "../util/logger.js";
import { registerArchiveCommand } from "./commands/archive.js";
import { registerDemoCommand } from "./commands/demo.js";
import { registerDoctorCommand } from "./commands/doctor.js";
import { registerExportCommand } from "./commands/export.js";
import { registerDetectCommand } from "./commands/detect.js";
import { registerHoldCommand } from "./commands/hold.js";
import { registerMigrateCommand } from "./commands/migrate.js";
import { registerQueryCommand } from "./commands/query.js";
import { registerReportCommand } from "./commands/report.js";
import { registerRunCommand } from "./commands/run.js";
import { registerSimulateCommand } from "./commands/simulate.js";
import { registerStatusCommand } from "./commands/status.js";
import { registerSyncCommand } from "./commands/sync.js";
import { registerWindowsCommand } from "./commands/windows.js";
import type { GlobalOptions } from "./runtime.js";

/** The global options, then every command in the order `--help` lists them. */
function buildProgram(): Command {
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
  registerDemoCommand(program, globals);
  registerSimulateCommand(program);
  registerMigrateCommand(program, globals);
  registerSyncCommand(program, globals);
  registerQueryCommand(program, globals);
  registerDoctorCommand(program, globals);
  registerRunCommand(program, globals);
  registerStatusCommand(program, globals);
  registerWindowsCommand(program, globals);
  registerReportCommand(program, globals);
  registerHoldCommand(program, globals);
  registerArchiveCommand(program, globals);
  registerExportCommand(program, globals);
  registerDetectCommand(program, globals);
  return program;
}

/** Runs the CLI; returns the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  const scrub = scrubber(secretsOfEnvironment());
  const program = buildProgram();
  endQuietlyOnBrokenPipe(process.stdout);
  endQuietlyOnBrokenPipe(process.stderr);
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
