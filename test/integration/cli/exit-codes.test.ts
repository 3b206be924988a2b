// The exit codes and messages of the command line are a contract (docs/commands.md, "Exit
// codes"): every command of COMMAND_TREE, through the built CLI, with each kind of mistake that
// applies to it — an unknown option, a missing argument, a bad value or date, an unknown name, a
// bad configuration value, a data directory it cannot use — exits with the code the table says,
// names the problem on stderr with a `hint:` line that names the fix, and prints no stack trace.
// A command added to the tree without a row here fails the test. Most mistakes are refused while
// the arguments are parsed: no simulator, no engine; one data directory, migrated once, serves
// the few that read it. Every case runs the CLI's main in this process (cli-in-process.ts: main
// writes the error and hint lines and returns the exit status the bin wrapper sets); the built
// CLI as a child runs one case of each exit code, for the exit status of the real process and
// its stderr without a stack trace, and `detect run --format csv`.
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMAND_TREE } from "../../../src/cli/command-tree.js";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import {
  buildCli,
  cleanEnv,
  ROOT,
  removeCli,
  runCli,
  type CliPackage,
  type CliResult,
} from "../../helpers/cli.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { migratedDataDir } from "../../helpers/warehouse.js";

/** Exit status: 1 failed, 2 refused input (0 done and 130 interrupted are not mistakes). */
type Code = 1 | 2;

interface Case {
  /** The kind of mistake, for the test's name. */
  mistake: string;
  args: readonly string[];
  env?: Record<string, string>;
  code: Code;
  /** What stderr's error line says. */
  message: RegExp;
  /** What the hint line names. */
  hint: RegExp;
}

/**
 * A command's row: its own mistakes, and the arguments that pass parsing, with which a bad
 * configuration value and a data directory it cannot use are tried (none: it loads neither).
 */
interface Row {
  cases?: readonly Case[];
  /** Arguments that parse: the command then loads the configuration. */
  config?: readonly string[];
  /** Arguments that parse: the command then opens the data directory. */
  dataDir?: readonly string[];
}

const NO_SUCH = "no-such-name-7";
const BAD_DATE = "2026-02-30";
/** A data directory no command stored anything in (under the test run's directory). */
const EMPTY = join(testTmpDir(), `exit-codes-empty-${process.pid}`);
const refused = (
  mistake: string,
  args: readonly string[],
  message: RegExp,
  hint: RegExp,
) => ({ mistake, args, code: 2 as const, message, hint });
/** The command `args` run: the longest start of them that names one. */
function commandOf(args: readonly string[]): string {
  for (let n = args.length; n > 0; n--) {
    const path = args.slice(0, n).join(" ");
    if (path in COMMAND_TREE) return path;
  }
  return "";
}
/** A mistake commander finds: the hint is the command's --help. */
const parsing = (mistake: string, args: readonly string[], message: RegExp) =>
  refused(
    mistake,
    args,
    message,
    new RegExp(`^run sessionhouse ${commandOf(args)} --help`),
  );
const missing = (args: readonly string[], what: string) =>
  parsing(
    "a missing argument",
    args,
    new RegExp(`missing required argument '${what}'|required option '${what}`),
  );
const badDate = (args: readonly string[], flag: string) =>
  refused(
    "a bad date",
    args,
    new RegExp(
      `${flag} "${BAD_DATE}" is not a date: February 2026 has 28 days`,
    ),
    /give a day the calendar has/,
  );

const RANGE = ["--from", "-1d", "--to", "now"];

const ROWS: Record<string, Row> = {
  demo: {
    cases: [
      parsing(
        "a bad value",
        ["demo", "--days", "0"],
        /--days must be a whole number from 1 to 90/,
      ),
    ],
    config: ["demo", "--days", "1"],
    dataDir: ["demo", "--days", "1"],
  },
  simulate: {
    cases: [
      refused(
        "a bad value",
        ["simulate", "--api-key", "k", "--clock", "sometimes"],
        /^--clock: unknown clock "sometimes"/,
        /simulate --help/,
      ),
      missing(["simulate"], "--api-key"),
      parsing(
        "a bad value",
        ["simulate", "--api-key", "k", "--port", "70000"],
        /--port must be a whole number/,
      ),
    ],
  },
  migrate: {
    cases: [
      parsing(
        "a bad value",
        ["migrate", "--to", "x"],
        /--to must be a whole number/,
      ),
    ],
    config: ["migrate"],
    dataDir: ["migrate"],
  },
  sync: {},
  "sync sessions": {
    cases: [
      badDate(["sync", "sessions", "--from", BAD_DATE], "--from"),
      refused(
        "a missing argument",
        ["sync", "sessions", "--to", "now"],
        /--to needs --from/,
        /give the start of the range with --from/,
      ),
    ],
    config: ["sync", "sessions"],
    dataDir: ["sync", "sessions"],
  },
  "sync reconcile": {
    cases: [
      parsing(
        "a bad value",
        ["sync", "reconcile", "--days", "0"],
        /--days must be a whole number/,
      ),
      badDate(
        ["sync", "reconcile", "--from", BAD_DATE, "--to", "now"],
        "--from",
      ),
    ],
    config: ["sync", "reconcile"],
    dataDir: ["sync", "reconcile"],
  },
  "sync aggregations": {
    cases: [
      badDate(["sync", "aggregations", "--from", BAD_DATE], "--from"),
      refused(
        "an unknown name",
        ["sync", "aggregations", "--job", NO_SUCH],
        new RegExp(`no aggregation job named "${NO_SUCH}"`),
        /the configured aggregation jobs, nearest first: /,
      ),
    ],
    config: ["sync", "aggregations"],
    dataDir: ["sync", "aggregations"],
  },
  "sync rollups": { config: ["sync", "rollups"], dataDir: ["sync", "rollups"] },
  query: {
    cases: [
      missing(["query"], "sql"),
      {
        mistake: "a data directory nothing was stored in",
        args: ["query", "SELECT 1"],
        env: { SESSIONHOUSE_DATA_DIR: EMPTY },
        code: 2,
        message:
          /the embedded data directory .* does not exist: nothing has been exported there yet, and this command only reads/,
        hint: /sessionhouse migrate \(or a sync, or run\) creates it/,
      },
    ],
    config: ["query", "SELECT 1"],
    dataDir: ["query", "SELECT 1"],
  },
  doctor: { config: ["doctor"] },
  run: { config: ["run"], dataDir: ["run"] },
  status: { config: ["status"], dataDir: ["status"] },
  windows: {},
  "windows list": { config: ["windows", "list"], dataDir: ["windows", "list"] },
  "windows skip": {
    cases: [
      missing(["windows", "skip", "--reason", "r"], "job"),
      missing(["windows", "skip", "sessions"], "--reason <text>"),
    ],
  },
  "windows forget": {
    cases: [
      missing(["windows", "forget"], "job"),
      refused(
        "an unknown name",
        ["windows", "forget", NO_SUCH, "--yes"],
        new RegExp(NO_SUCH),
        /./,
      ),
    ],
    config: ["windows", "forget", "tech", "--yes"],
    dataDir: ["windows", "forget", "tech", "--yes"],
  },
  report: {},
  "report verify": { cases: [missing(["report", "verify"], "dir")] },
  hold: {},
  "hold add": {
    cases: [
      missing(["hold", "add", "--user", "a@example.com"], "--reason <text>"),
      refused(
        "a missing argument",
        ["hold", "add", "--reason", "r"],
        /give exactly one of --user, --resource or --session/,
        /one hold names one person, resource or session/,
      ),
      badDate(
        [
          "hold",
          "add",
          "--user",
          "a@example.com",
          "--reason",
          "r",
          "--until",
          BAD_DATE,
        ],
        "--until",
      ),
    ],
  },
  "hold list": { config: ["hold", "list"], dataDir: ["hold", "list"] },
  "hold release": {
    cases: [missing(["hold", "release", "--reason", "r"], "id")],
  },
  archive: {},
  "archive export": {
    cases: [
      missing(["archive", "export"], "--month <YYYY-MM>"),
      refused(
        "a bad date",
        ["archive", "export", "--month", "2026-13"],
        /--month must be YYYY-MM, got "2026-13"/,
        /--month 2026-10/,
      ),
    ],
  },
  "archive verify": { cases: [missing(["archive", "verify"], "dir")] },
  "archive restore": {
    cases: [
      missing(["archive", "restore", "--from", "x"], "--month <YYYY-MM>"),
    ],
  },
  export: {
    cases: [
      missing(["export", ...RANGE], "standard"),
      missing(["export", "ocsf", "--to", "now"], "--from <time>"),
      badDate(["export", "ocsf", "--from", BAD_DATE, "--to", "now"], "--from"),
      refused(
        "an unknown name",
        ["export", NO_SUCH, ...RANGE],
        new RegExp(`no standard named "${NO_SUCH}"`),
        /the standards, nearest first: ocsf, ecs/,
      ),
    ],
    config: ["export", "ocsf", ...RANGE],
    dataDir: ["export", "ocsf", ...RANGE],
  },
  detect: {},
  "detect test": {
    cases: [
      refused(
        "an unknown name",
        ["detect", "test", "--dir", `/${NO_SUCH}`],
        new RegExp(`cannot read the detections directory /${NO_SUCH}`),
        /SESSIONHOUSE_DETECTIONS_DIR/,
      ),
    ],
  },
  "detect run": {
    cases: [
      missing(["detect", "run", "--from", "-1d"], "--rule <id>"),
      refused(
        "a bad value",
        ["detect", "run", "--rule", "r", "--from", "-1d", "--format", "xml"],
        /--format xml is not one of table, csv, json/,
        /--format csv/,
      ),
      badDate(["detect", "run", "--rule", "r", "--from", BAD_DATE], "--from"),
      refused(
        "an unknown name",
        ["detect", "run", "--rule", NO_SUCH, "--from", "-1d"],
        new RegExp(NO_SUCH),
        /./,
      ),
    ],
  },
  "detect compile": {},
};

/** The report kinds: one row each, the same mistakes. */
for (const path of Object.keys(COMMAND_TREE).filter(
  (p) => p.startsWith("report ") && p !== "report verify",
)) {
  const words = path.split(" ");
  ROWS[path] = {
    cases: [
      badDate([...words, "--from", BAD_DATE], "--from"),
      refused(
        "a bad value",
        [...words, "--format", "xml"],
        /"xml" is not a report format/,
        /html,pdf,csv,json/,
      ),
      refused(
        "an unknown name",
        [...words, "--filter", `${NO_SUCH}=1`],
        new RegExp(`"${NO_SUCH}=1" is not key=value with a known key`),
        /user=/,
      ),
    ],
    config: words,
    dataDir: words,
  };
}
/** The entity streams: one row each. */
for (const path of Object.keys(COMMAND_TREE).filter(
  (p) => p.startsWith("sync ") && !(p in ROWS),
))
  ROWS[path] = { config: path.split(" "), dataDir: path.split(" ") };

let cli: CliPackage;
let work: string;

beforeAll(async () => {
  cli = await buildCli();
  work = join(testTmpDir(), `exit-codes-${process.pid}`);
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "a-file"), "not a directory\n");
  // The tables, for the mistakes found by reading them (an unknown job, an empty hunt).
  await migratedDataDir(join(work, "data"));
}, 120_000);

afterAll(() => removeCli(cli));

/** The environment of every case: an API nothing answers, a data directory of its own. */
const env = (extra: Record<string, string> = {}) =>
  cleanEnv({
    SESSIONHOUSE_API_URL: "http://127.0.0.1:9",
    SESSIONHOUSE_API_KEY: "exit-codes-test-key-0123456789",
    SESSIONHOUSE_DATA_DIR: join(work, "data"),
    SESSIONHOUSE_LOG_LEVEL: "warn",
    ...extra,
  });

/** Every case of a command: its row's, and the mistakes every command can make. */
function casesOf(path: string): Case[] {
  const words = path.split(" ");
  const spec = COMMAND_TREE[path];
  const row = ROWS[path] ?? {};
  // Commander refuses a missing mandatory option before an unknown one: give them.
  const mandatory = (spec?.options ?? [])
    .filter((o) => o.required)
    .flatMap((o) => [o.flags.split(" ")[0] ?? "", "x"]);
  const cases: Case[] = [
    parsing(
      "an unknown option",
      [...words, ...mandatory, "--no-such-option"],
      /unknown option '--no-such-option'/,
    ),
    ...(row.cases ?? []),
  ];
  if (spec?.run === undefined) {
    cases.push(
      refused(
        "an unknown command",
        [...words, NO_SUCH],
        new RegExp(`no [a-z ]+ named "${NO_SUCH}"`),
        new RegExp(
          `nearest first: .*\`sessionhouse ${words.join(" ")} --help\` describes each`,
        ),
      ),
      refused(
        "a missing command",
        words,
        /a command is missing/,
        /add one of them/,
      ),
    );
  }
  if (row.config)
    cases.push({
      mistake: "a bad configuration value",
      args: row.config,
      env: { SESSIONHOUSE_LOG_FORMAT: "loud" },
      code: 2,
      message: /SESSIONHOUSE_LOG_FORMAT \(log\.format\)/,
      hint: /./,
    });
  if (row.dataDir)
    cases.push({
      mistake: "a data directory it cannot use",
      args: row.dataDir,
      env: { SESSIONHOUSE_DATA_DIR: join(work, "a-file", "data") },
      code: 1,
      message:
        /the data directory .* cannot be used: a part of its path is a file, not a directory/,
      hint: /SESSIONHOUSE_DATA_DIR/,
    });
  return cases;
}

/** A case run by the CLI's main in this process, as a child's result. */
async function inProcess(c: Case): Promise<CliResult> {
  const own: Record<string, string> = {};
  for (const [k, v] of Object.entries(env(c.env)))
    if (v !== undefined) own[k] = v;
  const r = await mainInProcess(own, ...c.args);
  return {
    code: r.status,
    signal: null,
    stdout: r.stdout,
    stderr: r.stderr,
    logs: [],
  };
}

/** What is wrong with a case's result, in words; empty when it keeps the contract. */
function breaches(c: Case, r: CliResult): string[] {
  const found: string[] = [];
  if (r.code !== c.code)
    found.push(`exit ${r.code} (${r.signal}), not ${c.code}`);
  // The error line and the lines under it, up to the hint.
  const error = /^error: ([^]*?)(?:^hint: |$(?![^]))/m.exec(r.stderr)?.[1];
  if (error === undefined || !c.message.test(error))
    found.push(`no error line matching ${c.message}`);
  const hint = /^hint: (.*)$/m.exec(r.stderr)?.[1];
  if (hint === undefined || !c.hint.test(hint))
    found.push(`no hint line matching ${c.hint}`);
  if (/\n\s+at /.test(r.stderr)) found.push("a stack trace");
  return found.length === 0
    ? []
    : [
        `sessionhouse ${c.args.join(" ")}${c.env ? ` (${JSON.stringify(c.env)})` : ""}: ${found.join("; ")}\n${r.stderr}`,
      ];
}

describe("detect run --format csv", () => {
  it("writes the header of the hits' columns when nothing is found", async () => {
    const [rule] = loadRules([SHIPPED_RULES_DIR]);
    const r = await runCli(
      cli,
      [
        "detect",
        "run",
        "--rule",
        rule?.id ?? "",
        "--from",
        "-1d",
        "--format",
        "csv",
      ],
      env(),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "rule,hit_key,session_id,event_time,arrived_at,actor,historical,pages\n",
    );
  }, 60_000);
});

/** The uid and gid of `nobody` when this process may run a child as them (as root). */
function nobody(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) =>
    Number(spawnSync("id", [flag, "nobody"], { encoding: "utf8" }).stdout);
  const [uid, gid] = [id("-u"), id("-g")];
  return uid > 0 && gid > 0 ? { uid, gid } : undefined;
}

describe("a data directory of another user", () => {
  const user = nobody();
  it.runIf(user !== undefined)(
    "is refused for permission, exit 1, with the setting to change and no stack",
    () => {
      // The package as the build left it in the repository (readable by others), run as nobody
      // on a directory of root's that only root may enter.
      const r = spawnSync(
        process.execPath,
        [join(ROOT, "bin", "sessionhouse.js"), "status"],
        {
          ...user,
          cwd: "/",
          encoding: "utf8",
          env: env({ HOME: "/", SESSIONHOUSE_DATA_DIR: join(work, "data") }),
          timeout: 60_000,
        },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /^error: the data directory .* cannot be used: permission denied to this user$/m,
      );
      expect(r.stderr).toMatch(/^hint: set SESSIONHOUSE_DATA_DIR/m);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
    60_000,
  );
});

describe("every command's exit code and message, for each kind of mistake", () => {
  it("has a row for every command of the tree, and none for a command it does not have", () => {
    expect(Object.keys(ROWS).sort()).toEqual(Object.keys(COMMAND_TREE).sort());
  });

  it("exits 2 (refused input) or 1 (failed), names the problem, gives a hint, prints no stack", async () => {
    const cases = Object.keys(COMMAND_TREE).flatMap(casesOf);
    // One at a time: main in process has this process's environment and output to itself.
    const broken: string[] = [];
    for (const c of cases) broken.push(...breaches(c, await inProcess(c)));
    expect(broken).toEqual([]);
    expect(cases.length).toBeGreaterThan(Object.keys(COMMAND_TREE).length * 2);
  }, 240_000);

  it("the built CLI as a child: a case of each exit code exits with it, without a stack", async () => {
    const cases = Object.keys(COMMAND_TREE).flatMap(casesOf);
    // Refused while parsing (2), refused by the configuration (2), a data directory it cannot
    // use (1): the three ways a case ends before any command's work.
    const picked = [
      cases.find((c) => c.mistake === "an unknown option"),
      cases.find((c) => c.mistake === "a bad configuration value"),
      cases.find((c) => c.code === 1),
    ].filter((c) => c !== undefined);
    expect(new Set(picked.map((c) => c.code))).toEqual(new Set([1, 2]));
    const results = await Promise.all(
      picked.map((c) => runCli(cli, c.args, env(c.env), 60_000)),
    );
    const broken = picked.flatMap((c, i) =>
      breaches(c, results[i] as CliResult),
    );
    expect(broken).toEqual([]);
  }, 120_000);
});
