// A command declared as data (its description, arguments, options, what it does to the embedded
// engine's data directory and the handler it runs) and the one function that declares a tree of
// them on commander (the tree itself: command-tree.ts); with the flags several commands share
// (--json, --all, --by, --reason, --from/--to, --public-key), each written once here.
import { Option, type Command } from "commander";
import { noSuchName } from "../util/nearest.js";
import type { GlobalOptions } from "./runtime.js";

/** The help of the commands that write, on the embedded engine beside a running service. */
const WRITES_DATA_DIR =
  "\nOn the embedded engine this command writes to the data directory: while\n" +
  "sessionhouse run holds it, the command is refused (DATA_DIR_IN_USE); stop the\n" +
  "service first (SIGTERM or Ctrl-C), or let the service do the work on its schedule.";

/** The help of the commands that read, on the embedded engine beside a running service. */
export const READS_THROUGH_SERVICE =
  "\nThis command only reads: ClickHouse runs it read-only (readonly = 1), so a reader's\n" +
  "credentials serve it, and it creates nothing (a database not created yet is refused).\n" +
  "On the embedded engine, while sessionhouse run holds the data directory, this\n" +
  "command reads through the service's read-only access (found in\n" +
  "<dataDir>/.sessionhouse-service.json); otherwise it opens the data directory.";

export interface OptionSpec {
  /** As commander reads them, e.g. "--by <name>". */
  flags: string;
  help: string;
  required?: boolean;
  /** Turns the text given into the value (commander's argParser). */
  parse?: (value: string) => unknown;
  default?: string | number;
  /** The environment variable that gives the value when the flag is not given. */
  env?: string;
}

/**
 * What a command runs: the global options, then what commander hands its action (the positional
 * arguments in order, then the options as the handler's own flags type says).
 */
export type CommandHandler = (
  globals: GlobalOptions,
  ...args: never[]
) => void | Promise<void>;

export interface CommandSpec {
  description: string;
  /** Positional arguments, in order: name (e.g. "<dir>") and help. */
  args?: readonly (readonly [name: string, help: string])[];
  options?: readonly OptionSpec[];
  /** Said in the help: reads through a running service, or writes the data directory. */
  access?: "reads" | "writes";
  /** More help after the options. */
  more?: string;
  /** What it does; none on a group, which only holds its subcommands. */
  run?: CommandHandler;
  /**
   * On a group: what the word after it names (singular, plural; default "<group> command") and,
   * when not every subcommand is one, which are (default: every subcommand). A word that is
   * none of them is refused naming them, nearest first.
   */
  names?: {
    kind: readonly [one: string, many: string];
    list?: readonly string[];
  };
}

/**
 * Declares every command of `tree` on `program`, in the tree's order: a key's last word is the
 * command's name, the words before it name its parent, declared before it.
 */
export function registerCommands(
  program: Command,
  tree: Readonly<Record<string, CommandSpec>>,
  globals: () => GlobalOptions,
): void {
  refuseUnknownWords(program, "", { description: "" });
  const declared = new Map<string, Command>([["", program]]);
  for (const [path, spec] of Object.entries(tree)) {
    const words = path.split(" ");
    const name = words.pop() ?? path;
    const parent = declared.get(words.join(" "));
    if (parent === undefined)
      throw new Error(`command "${path}" comes before its parent`);
    const command = subcommand(parent, name, spec).showHelpAfterError(
      `hint: run sessionhouse ${path} --help for its arguments and options`,
    );
    if (spec.run === undefined) refuseUnknownWords(command, path, spec);
    const run = spec.run;
    // Commander hands the action the positional arguments, the options and the command itself,
    // untyped: the handler gets the arguments and the options; its parameters say what they are.
    if (run !== undefined)
      command.action((...args: unknown[]) =>
        run(globals(), ...(args.slice(0, -1) as never[])),
      );
    declared.set(path, command);
  }
}

/**
 * A word after the group `path` ("" for the program) that names none of its subcommands is
 * refused (exit 2) naming them, nearest first, instead of commander's "unknown command".
 */
function refuseUnknownWords(
  group: Command,
  path: string,
  spec: CommandSpec,
): void {
  group.on("command:*", (operands: string[]) => {
    const word = operands[0] ?? "";
    const list = spec.names?.list ?? group.commands.map((c) => c.name());
    const words = path === "" ? "" : `${path} `;
    throw noSuchName(
      spec.names?.kind ?? [`${words}command`, `${words}commands`],
      word,
      list,
      `\`sessionhouse ${words}--help\` describes each`,
    );
  });
}

/** Declares `name` under `parent` as `spec` says, without its action. */
function subcommand(parent: Command, name: string, spec: CommandSpec): Command {
  const command = parent.command(name).description(spec.description);
  for (const [arg, help] of spec.args ?? []) command.argument(arg, help);
  for (const o of spec.options ?? []) {
    const option = new Option(o.flags, o.help);
    if (o.parse) option.argParser(o.parse);
    if (o.default !== undefined) option.default(o.default);
    if (o.env !== undefined) option.env(o.env);
    if (o.required) option.makeOptionMandatory();
    command.addOption(option);
  }
  const after = [
    spec.more ?? "",
    spec.access === "reads" ? READS_THROUGH_SERVICE : "",
    spec.access === "writes" ? WRITES_DATA_DIR : "",
  ].join("");
  if (after !== "") command.addHelpText("after", after);
  return command;
}

export const JSON_FLAG: OptionSpec = {
  flags: "--json",
  help: "print JSON for programs instead of a table",
};

/** --all: also the records a listing leaves out by default (`what`). */
export const allFlag = (what: string): OptionSpec => ({
  flags: "--all",
  help: `also ${what}`,
});

/** --by: the operator recorded with a change (`act`: "places it", "skips it"). */
export const byFlag = (act: string): OptionSpec => ({
  flags: "--by <name>",
  help: `who ${act} (default: the OS user)`,
});

/** --reason: why a change is made, recorded with it. */
export const reasonFlag = (help: string): OptionSpec => ({
  flags: "--reason <text>",
  help,
  required: true,
});

/** --reason and --by of a recorded decision (see decision in operator.ts). */
export const decisionFlags = (why: string, act: string): OptionSpec[] => [
  reasonFlag(why),
  byFlag(act),
];

/** --from and --to of a time range. */
export const rangeFlags = (from: string, to: string): OptionSpec[] => [
  { flags: "--from <time>", help: from },
  { flags: "--to <time>", help: to },
];

/** --public-key: the key a signature is checked with. */
export const publicKeyFlag = (help: string): OptionSpec => ({
  flags: "--public-key <file>",
  help,
});
