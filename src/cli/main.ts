// The `sessionhouse` command line: a thin layer that parses flags, builds the runtime and hands
// over to the pipeline, scheduler or simulator. Exit status: 0 done, 1 failed, 2 bad input.
import { Command, CommanderError } from "commander";
import { ConfigError, secretsOfEnvironment } from "../config/index.js";
import { RefusedError, SessionhouseError, UsageError } from "../util/errors.js";
import { VERSION } from "../util/version.js";
import { endQuietlyOnBrokenPipe } from "../util/broken-pipe.js";
import { rememberedSecrets, scrubber } from "../util/logger.js";
import { COMMAND_TREE } from "./command-tree.js";
import { registerCommands } from "./options.js";
import type { GlobalOptions } from "./runtime.js";

/** The global options, then every command of the command tree. */
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
      "hint: run sessionhouse --help for the commands and their options",
    )
    .configureOutput({ outputError: (str, write) => write(str) })
    .exitOverride();

  registerCommands(program, COMMAND_TREE, () => program.opts<GlobalOptions>());
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
      // --help and --version end here too, with exit code 0. A group without its command
      // (`sessionhouse sync`) printed its usage on stderr: say what is missing under it.
      if (err.code === "commander.help" && err.exitCode !== 0)
        process.stderr.write(
          "error: a command is missing: the usage above lists the commands of this group\nhint: add one of them, e.g. the first one listed\n",
        );
      return err.exitCode === 0 ? 0 : 2;
    }
    // Also what the config turned out to hold (a key file, a config file): known by now.
    const write = (s: string) =>
      process.stderr.write(scrubber(rememberedSecrets())(scrub(s)));
    if (err instanceof SessionhouseError) {
      write(`error: ${err.message}\n`);
      if (err.hint) write(`hint: ${err.hint}\n`);
      return err instanceof ConfigError ||
        err instanceof UsageError ||
        err instanceof RefusedError
        ? 2
        : 1;
    }
    write(
      `error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}
