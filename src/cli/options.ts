// A subcommand declared as data (its description, arguments, options and what it does to the
// embedded engine's data directory) and the one function that declares it on commander; with the
// flags several commands share (--json, --all, --by, --reason, --from/--to, --public-key),
// each written once here.
import { Option, type Command } from "commander";
import { READS_THROUGH_SERVICE, WRITES_DATA_DIR } from "./runtime.js";

export interface OptionSpec {
  /** As commander reads them, e.g. "--by <name>". */
  flags: string;
  help: string;
  required?: boolean;
  /** Turns the text given into the value (commander's argParser). */
  parse?: (value: string) => unknown;
  default?: string | number;
}

export interface CommandSpec {
  description: string;
  /** Positional arguments, in order: name (e.g. "<dir>") and help. */
  args?: readonly (readonly [name: string, help: string])[];
  options?: readonly OptionSpec[];
  /** Said in the help: reads through a running service, or writes the data directory. */
  access?: "reads" | "writes";
  /** More help after the options. */
  more?: string;
}

/** Declares `name` under `parent` as `spec` says; the caller adds the action. */
export function subcommand(
  parent: Command,
  name: string,
  spec: CommandSpec,
): Command {
  const command = parent.command(name).description(spec.description);
  for (const [arg, help] of spec.args ?? []) command.argument(arg, help);
  for (const o of spec.options ?? []) {
    const option = new Option(o.flags, o.help);
    if (o.parse) option.argParser(o.parse);
    if (o.default !== undefined) option.default(o.default);
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
