// Every command of `sessionhouse` as data, in the order `--help` lists them: keyed by the words
// that name it on the command line ("hold add" is `add` under `hold`), each with its description,
// arguments, options and the handler it runs (in src/cli/commands/<name>.ts). A group (`hold`)
// has no handler of its own. registerCommands in options.ts declares them on commander.
import {
  REPORT_FORMATS,
  REPORT_KINDS,
  type ReportKind,
} from "../config/index.js";
import { ENTITY_STREAMS, type EntityStream } from "../pipeline/names.js";
import type { ReportOptions } from "./commands/report.js";
import { intArg } from "./args.js";
import {
  allFlag,
  byFlag,
  decisionFlags,
  JSON_FLAG,
  publicKeyFlag,
  rangeFlags,
  READS_THROUGH_SERVICE,
  reasonFlag,
  type CommandHandler,
  type CommandSpec,
  type OptionSpec,
} from "./options.js";
import { TABLE_FORMAT } from "./output.js";
import type { GlobalOptions } from "./runtime.js";

/**
 * The handler `name` of the module `load` imports, imported when the command runs: `--help`, a
 * version or a mistake in the arguments loads no command's code (the engine, the API client, the
 * simulator, the report renderer).
 */
function lazy<M>(
  load: () => Promise<M>,
  pick: (module: M) => CommandHandler,
): CommandHandler {
  return async (globals, ...args) => pick(await load())(globals, ...args);
}

/**
 * Lists the help names that their owners define in modules that load heavy code: copied here so
 * that the help loads none of it; command-tree.test.ts holds each copy to its owner.
 */
export const HELP_LISTS = {
  /** STANDARD_VIEWS' names, src/warehouse/standards/views.ts */
  standards: ["ocsf", "ecs"],
  /** FILTER_KEYS, src/reports/build.ts */
  reportFilters: ["user", "resource", "environment"],
  /** DEFAULT_ARCHIVE_DIR, src/warehouse/archive.ts */
  archiveDir: "./archive",
  /** ALERT_RULES_FILE, src/detections/grafana.ts */
  alertRulesFile: "detections.yaml",
} as const;

const archive = () => import("./commands/archive.js");
const detect = () => import("./commands/detect.js");
const hold = () => import("./commands/hold.js");
const sync = () => import("./commands/sync.js");
const windows = () => import("./commands/windows.js");

const REPORT_KIND_HELP: Record<ReportKind, string> = {
  "access-review":
    "per person: systems reached, sessions, first and last access, data labels, privileged or production access, new access, accounts without activity",
  "policy-exceptions":
    "policy suspensions in force during the period and the sessions under them",
  "sensitive-data-access":
    "labelled data returned, by label, resource and person, with the top query fingerprints",
  "coverage-and-integrity":
    "what the record covers: checkpoints, windows not stored or skipped, dead letters, runs, gaps, retention, rows per month",
};

const SEED_FLAG: OptionSpec = {
  flags: "--seed <n>",
  help: "seed of the simulated organisation",
  parse: intArg("--seed", 0, 2 ** 31 - 1),
  default: 1,
};

/** --from/--to of a backfill; `back` is the relative example, e.g. "-7d". */
const backfillFlags = (back: string) =>
  rangeFlags(
    `backfill from this instant (2026-11-01, RFC 3339, Unix seconds, ${back})`,
    "backfill up to this instant (default now)",
  );

const ENTITY_STREAM_HELP: Readonly<Record<EntityStream, string>> = {
  users:
    "GetUser for every user sessions and policy suspensions name: new ids, and known ones not read for streams.usersRefreshMs",
  user_devices: "ListUserDevices for every human user",
  native_users:
    "ListNativeUsers for every resource sessions name (credentials without their secrets)",
  identity_links: "ListNativeUserIdentityLinks, all links",
  inventory:
    "ListInventoryObjects, the whole inventory: one row per column and sub-column",
  policy_suspensions:
    "ListPolicySuspensions, the whole listing: every new version, and a removal for each one no longer listed",
  clouds: "ListIntegrationClouds",
};

const monthFlag = (help: string): OptionSpec => ({
  flags: "--month <YYYY-MM>",
  help,
  required: true,
});

const archivePublicKeyFlag = (signedBy: string) =>
  publicKeyFlag(
    `Ed25519 public key (PEM) ${signedBy} (default SESSIONHOUSE_PUBLIC_KEY_FILE, else the public half of SESSIONHOUSE_SIGNING_KEY_FILE)`,
  );

const ARCHIVE_EXPORT_HELP =
  "\nReads the database, but needs a user that may write: it migrates first, and the embedded\n" +
  "engine writes the Parquet files itself. While sessionhouse run holds the embedded data\n" +
  "directory, the export goes through the service's read-only access (the service encodes\n" +
  "the Parquet and this process writes the files).";

export const COMMAND_TREE: Readonly<Record<string, CommandSpec>> = {
  demo: {
    description:
      "simulate a control plane, sync the last days into the embedded ClickHouse, and show a summary",
    options: [
      {
        flags: "--days <n>",
        help: "days of history to sync",
        parse: intArg("--days", 1, 90),
        default: 7,
      },
      SEED_FLAG,
      {
        flags: "--sessions-per-day <n>",
        help: "activity of the simulated organisation",
        parse: intArg("--sessions-per-day", 1, 10_000_000),
      },
    ],
    access: "writes",
    run: lazy(
      () => import("./commands/demo.js"),
      (m) => m.runDemo,
    ),
  },
  simulate: {
    description:
      "run the control-plane simulator (a local stand-in for the real API) until stopped",
    options: [
      {
        flags: "--port <n>",
        help: "port; 0 picks a free one and prints it",
        parse: intArg("--port", 0, 65_535),
        default: 0,
      },
      {
        flags: "--host <address>",
        help: "address to bind",
        default: "127.0.0.1",
      },
      SEED_FLAG,
      {
        flags: "--api-key <key>",
        help: "API key clients must send in X-API-KEY",
        env: "SIMULATOR_API_KEY",
        required: true,
      },
      {
        flags: "--clock <spec>",
        help: "real, fixed:<RFC3339> or accelerated:<factor>[@<RFC3339>]",
        default: "real",
      },
      {
        flags: "--faults <spec>",
        help: 'injected faults, e.g. "all=0.02,seed=7" or "rate429=0.05,wrong-shape=0.01" (see src/simulator/README.md)',
      },
      {
        flags: "--mutations <spec>",
        help: 'mutation mode: answers that contradict one another read after read, e.g. "all=0.05,seed=7" or "vanish=0.1,duplicate-key=0.2" (see src/simulator/README.md)',
      },
      {
        flags: "--sessions-per-day <n>",
        help: "average sessions a day",
        parse: intArg("--sessions-per-day", 1, 10_000_000),
      },
      {
        flags: "--history-days <n>",
        help: "days of history before the clock",
        parse: intArg("--history-days", 1, 3650),
      },
      {
        flags: "--brand-member <name>",
        help: "wire name of the session user's brand member",
        default: "formal",
      },
      {
        flags: "--latency <spec>",
        help: 'a remote service\'s pace: time to first byte, body rate per answer, answers at once, e.g. "400ms,20MB/s,4"',
      },
      {
        flags: "--replay-sessions <file>",
        help: "serve these session records (JSON Lines, one raw API record a line) instead of generated sessions",
      },
      { flags: "--bench", help: "serve pre-built pages (benchmark mode)" },
      {
        flags: "--bench-cache-mb <n>",
        help: "memory for pre-built pages in benchmark mode",
        parse: intArg("--bench-cache-mb", 1, 65_536),
        default: 512,
      },
    ],
    run: lazy(
      () => import("./commands/simulate.js"),
      (m) => m.runSimulateCommand,
    ),
  },
  migrate: {
    description:
      "create or upgrade the ClickHouse tables (also done before every sync)",
    options: [
      {
        flags: "--dry-run",
        help: "print each pending migration and its statements as they would run; write nothing",
      },
      {
        flags: "--to <version>",
        help: "apply the migrations up to this number only (e.g. 0019)",
        parse: intArg("--to", 1, 9999),
      },
    ],
    access: "writes",
    run: lazy(
      () => import("./commands/migrate.js"),
      (m) => m.runMigrate,
    ),
  },
  sync: {
    description: "sync one stream now, incrementally or as a backfill",
    access: "writes",
    names: { kind: ["stream", "streams"] },
  },
  "sync sessions": {
    description:
      "page ListSessionsV2 into the sessions table (continues from the checkpoint without --from)",
    options: backfillFlags("-7d"),
    access: "writes",
    run: lazy(sync, (m) => m.runSyncSessions),
  },
  "sync reconcile": {
    description:
      "list the last days again and store the sessions the incremental sync missed (late sessions); compares listed and stored counts per window",
    options: [
      {
        flags: "--days <n>",
        help: "days before the sessions checkpoint (default sessions.reconcileDays)",
        parse: intArg("--days", 1, 3650),
      },
      ...rangeFlags(
        "reconcile from this instant instead (2026-11-01, RFC 3339, Unix seconds, -3d)",
        "reconcile up to this instant (default now)",
      ),
    ],
    access: "writes",
    run: lazy(sync, (m) => m.runReconcile),
  },
  "sync aggregations": {
    description:
      "fetch ListLogAggregations for every configured aggregation job (or one with --job)",
    options: [
      { flags: "--job <name>", help: "only this aggregation job" },
      ...backfillFlags("-30d"),
    ],
    access: "writes",
    run: lazy(sync, (m) => m.runSyncAggregations),
  },
  "sync rollups": {
    description:
      "compute the daily rollups of every settled day that changed since it was computed (no API requests)",
    access: "writes",
    run: lazy(sync, (m) => m.runSyncRollups),
  },
  ...Object.fromEntries(
    ENTITY_STREAMS.map((stream): [string, CommandSpec] => [
      `sync ${stream}`,
      {
        description: ENTITY_STREAM_HELP[stream],
        access: "writes",
        run: async (globals: GlobalOptions) =>
          (await sync()).runSyncEntity(globals, stream),
      },
    ]),
  ),
  query: {
    description:
      'run SQL against the configured ClickHouse, e.g. query "SELECT count() FROM sessions FINAL"',
    args: [["<sql>", "the SQL statement"]],
    options: [
      {
        flags: "--format <format>",
        help: "table, or any ClickHouse output format (TSV, CSVWithNames, JSONEachRow, Pretty, Markdown, Parquet, …); binary formats only to a file or a pipe; row formats (CSV, TSV, JSONEachRow, …) stream block by block",
        default: TABLE_FORMAT,
      },
      {
        flags: "--write",
        help: `run a statement that writes (ALTER, INSERT, OPTIMIZE, SYSTEM …) with the writer's access: for the owner, who needs a user that may write; without it the statement must be one read, run read-only: a SELECT, SHOW, DESCRIBE, EXISTS or EXPLAIN (docs/commands.md lists them)`,
      },
    ],
    more:
      READS_THROUGH_SERVICE +
      "\nThrough the service a query is read-only (readonly = 1) and capped in time and memory;\n" +
      "query --write is refused while the service holds the data directory.",
    run: lazy(
      () => import("./commands/query.js"),
      (m) => m.runQueryCommand,
    ),
  },
  doctor: {
    description:
      "preflight before run: the configuration, the API (one smallest read per operation, never a write), ClickHouse, the data directory, reports; exit 1 when a check fails",
    options: [
      {
        flags: "--json",
        help: "print JSON for programs instead of one line per check",
      },
      {
        flags: "--offline",
        help: "check the configuration alone, without the network or ClickHouse: every setting's value and where it came from, unknown and misspelt names; works without the API settings",
      },
    ],
    run: lazy(
      () => import("./commands/doctor.js"),
      (m) => m.runDoctorCommand,
    ),
  },
  run: {
    description:
      "run every job on its schedule, with /healthz, /readyz and /metrics, until SIGTERM or SIGINT",
    more:
      "\nOn the embedded engine the service holds the data directory; it serves read-only\n" +
      "ClickHouse HTTP access to it on 127.0.0.1 (service.readHost, service.readPort) and\n" +
      "writes the URL and a token to <dataDir>/.sessionhouse-service.json (mode 0600), so\n" +
      "status, query and windows list from other terminals read through it. Commands that\n" +
      "write (migrate, sync, windows skip/forget, demo) are refused until it stops.\n" +
      "\nOne process at a time runs the jobs of a database: it holds the service lease. Another\n" +
      "run waits as a standby (live, not ready) and takes over once the lease is released\n" +
      "or expires; sync is refused while it is held (docs/scale-out.md).",
    run: lazy(
      () => import("./commands/run.js"),
      (m) => m.runServiceCommand,
    ),
  },
  status: {
    description:
      "show every job's checkpoint, lag, last run, rows stored, dead letters and next run",
    options: [
      {
        flags: "--json",
        help: "print one JSON document for programs instead of a table",
      },
    ],
    access: "reads",
    run: lazy(
      () => import("./commands/status.js"),
      (m) => m.runStatus,
    ),
  },
  windows: {
    description:
      "windows of the aggregation jobs and of the sessions stream not stored yet (pending, poisoned) and what to do about them",
  },
  "windows list": {
    description:
      "list the windows that are pending or poisoned, with their attempts and last error (--all: every state)",
    options: [
      {
        flags: "--job <name>",
        help: 'only this aggregation job, or "sessions"',
      },
      allFlag("the stored, shrunk and skipped windows"),
      JSON_FLAG,
    ],
    access: "reads",
    run: lazy(windows, (m) => m.runWindowsList),
  },
  "windows skip": {
    description:
      "let the checkpoint of JOB pass a pending or poisoned window, or a parent its stream could not read, recording who and why",
    args: [
      [
        "<job>",
        'the aggregation job, "sessions", or the stream of a parent (native_users, user_devices, users)',
      ],
    ],
    options: [
      {
        flags: "--window <time>",
        help: "start of the window, as `windows list` shows it",
      },
      {
        flags: "--parent <id>",
        help: "the parent (a resource, a user) its stream could not read, as `windows list` shows it",
      },
      ...decisionFlags("why the window is skipped (recorded)", "skips it"),
    ],
    access: "writes",
    run: lazy(windows, (m) => m.runWindowsSkip),
  },
  "windows forget": {
    description:
      "delete every row and checkpoint of an aggregation job, so that it starts again from nothing; a window an operator skipped stays skipped, with who and why",
    args: [["<job>", "the aggregation job"]],
    options: [
      { flags: "--yes", help: "confirm: the job's stored rows are deleted" },
    ],
    access: "writes",
    run: lazy(windows, (m) => m.runWindowsForget),
  },
  report: {
    description:
      "compliance reports: a directory with report.html, report.pdf, CSVs, report.json and a signed manifest",
    names: { kind: ["report kind", "report kinds"], list: REPORT_KINDS },
  },
  ...Object.fromEntries(
    REPORT_KINDS.map((kind): [string, CommandSpec] => [
      `report ${kind}`,
      {
        description: REPORT_KIND_HELP[kind],
        options: [
          ...rangeFlags(
            "start of the period (default: the previous month's first day)",
            "end of the period, excluded (default: this month's first day; with only --from, now)",
          ),
          {
            flags: "--out <dir>",
            help: "directory to write (default ./reports/<kind>-<from>-to-<to>)",
          },
          {
            flags: "--format <list>",
            help: `formats: ${REPORT_FORMATS.join(",")}`,
            default: REPORT_FORMATS.join(","),
          },
          {
            flags: "--filter <list>",
            help: `only these: ${HELP_LISTS.reportFilters.map((k) => `${k}=…`).join(",")}`,
          },
          {
            flags: "--force",
            help: "write the report although a filter value is in no session stored (page one says so)",
          },
          {
            flags: "--replace",
            help: "write over the leftover of an interrupted report in --out (never over a finished one)",
          },
        ],
        access: "reads",
        run: async (globals: GlobalOptions, o: ReportOptions) =>
          (await import("./commands/report.js")).runReport(globals, kind, o),
      },
    ]),
  ),
  "report verify": {
    description:
      "check a report directory offline: every file's SHA-256 against manifest.json, and its signature",
    args: [["<dir>", "the report directory"]],
    options: [
      publicKeyFlag("Ed25519 public key (PEM) the manifest must be signed by"),
    ],
    run: lazy(
      () => import("./commands/report.js"),
      (m) => m.runReportVerify,
    ),
  },
  hold: {
    description:
      "legal holds: sessions a hold names are never deleted by the retention",
  },
  "hold add": {
    description:
      "place a hold on a person's, a resource's or one session's sessions (and flag those stored)",
    options: [
      {
        flags: "--user <key>",
        help: "a person: e-mail, or user name of a machine user",
      },
      { flags: "--resource <name>", help: "a resource, by name" },
      { flags: "--session <id>", help: "a session and its child sessions" },
      reasonFlag("why (recorded, e.g. the matter)"),
      {
        flags: "--until <time>",
        help: "end of the hold (default: until released)",
      },
      byFlag("places it"),
      {
        flags: "--force",
        help: "hold a person or resource no stored session names yet (without it, one is refused naming the nearest that are stored)",
      },
    ],
    access: "writes",
    run: lazy(hold, (m) => m.runHoldAdd),
  },
  "hold list": {
    description: "list the active holds (--all: released and expired too)",
    options: [allFlag("released and expired holds"), JSON_FLAG],
    access: "reads",
    run: lazy(hold, (m) => m.runHoldList),
  },
  "hold release": {
    description:
      "release a hold: normal retention resumes for the sessions no other hold names",
    args: [["<id>", "the hold, as `hold list` shows it"]],
    options: decisionFlags("why it is released (recorded)", "releases it"),
    access: "writes",
    run: lazy(hold, (m) => m.runHoldRelease),
  },
  archive: {
    description:
      "monthly Parquet archives with a signed, chained manifest: export, verify, restore",
  },
  "archive export": {
    description:
      "write a month's deduplicated sessions, aggregations and histories as Parquet with manifest.json",
    options: [
      monthFlag("the month (UTC), e.g. 2026-10"),
      {
        flags: "--to <dir>",
        help: `archive directory (one YYYY-MM directory per month; default SESSIONHOUSE_ARCHIVE_DIR, else ${HELP_LISTS.archiveDir})`,
      },
      {
        flags: "--skip-gap",
        help: "leave the months between the archive's last month and this one out of the chain for good (recorded in the manifest; needs --reason)",
      },
      {
        flags: "--reason <text>",
        help: "why the months are skipped (with --skip-gap)",
      },
      byFlag("skips them"),
    ],
    more: `${ARCHIVE_EXPORT_HELP}\nA month is exported once it has ended and settled: its end plus the longer of the\nsessions lookback (SESSIONHOUSE_LOOKBACK) and the aggregations' refetch; and only when\nthe sessions stream's checkpoints cover it whole and no session of it is gone. The\nmonth's rows are then marked archived: with SESSIONHOUSE_ARCHIVE_DIR set, the retention\ndeletes only those. Exit 2: a bad --month, a path or a gap refused; 1: a month not\nended, not synced or thinned, or a failure.`,
    run: lazy(archive, (m) => m.runArchiveExport),
  },
  "archive verify": {
    description:
      "check every month's file hashes, signature, chain and row counts (reads the Parquet back)",
    args: [["<dir>", "the archive directory"]],
    options: [
      archivePublicKeyFlag("every manifest must be signed by"),
      {
        flags: "--expect-head <sha256>",
        help: "the chain head kept when the last month was archived",
      },
    ],
    more: "\nNeeds no database: it reads the files with an engine of its own, so it also runs\nwhile sessionhouse run holds the data directory. It says what it could not check\n(no public key, no head).",
    run: lazy(archive, (m) => m.runArchiveVerify),
  },
  "archive restore": {
    description: "load an archived month back (again: changes nothing)",
    options: [
      monthFlag("the archived month"),
      { flags: "--from <dir>", help: "the archive directory", required: true },
      {
        flags: "--database <name>",
        help: "load into this database (default CLICKHOUSE_DATABASE)",
      },
      archivePublicKeyFlag("the month must be signed by"),
      {
        flags: "--allow-unsigned",
        help: "restore a month that is not signed (nothing shows who wrote it)",
      },
    ],
    more: "\nThe month is checked as archive verify checks it, and is refused when anything is wrong:\na signed month needs the public key, an unsigned one --allow-unsigned. Only the\narchive's data tables are written.",
    access: "writes",
    run: lazy(archive, (m) => m.runArchiveRestore),
  },
  export: {
    description:
      "the sessions that started in a range as JSON Lines of a standard schema: ocsf (OCSF 1.8 Datastore Activity) or ecs (Elastic Common Schema 8)",
    args: [["<standard>", HELP_LISTS.standards.join(" or ")]],
    options: [
      {
        flags: "--from <time>",
        help: "start of the range (ISO 8601, Unix seconds, -7d, now)",
        required: true,
      },
      {
        flags: "--to <time>",
        help: "end of the range, excluded",
        required: true,
      },
      {
        flags: "--out <file>",
        help: "write to this new file (mode 0600) instead of stdout",
      },
    ],
    access: "reads",
    run: lazy(
      () => import("./commands/export.js"),
      (m) => m.runExport,
    ),
  },
  detect: {
    description:
      "detections as code: test the rules, hunt with one, compile them to Grafana alert rules",
  },
  "detect test": {
    description:
      "run every rule's fixtures on an embedded engine of its own; fails naming the rule and the fixture",
    options: [
      {
        flags: "--dir <dir>",
        help: "the rules of this directory (default: the shipped rules and detections.dir)",
      },
    ],
    run: lazy(detect, (m) => m.runDetectTest),
  },
  "detect run": {
    description:
      "hunt: one rule over the sessions that started in a range (hits are printed, not recorded)",
    options: [
      { flags: "--rule <id>", help: "the rule's id", required: true },
      {
        flags: "--from <time>",
        help: "start of the range (2026-11-01, RFC 3339, Unix seconds, -7d)",
        required: true,
      },
      {
        flags: "--to <time>",
        help: "end of the range (default now)",
        default: "now",
      },
      {
        flags: "--format <format>",
        help: "table (default), csv or json",
        default: "table",
      },
      {
        flags: "--out <file>",
        help: "write to this file instead of standard output",
      },
    ],
    access: "reads",
    run: lazy(detect, (m) => m.runHunt),
  },
  "detect compile": {
    description: `write the Grafana alert-rule provisioning file of every rule (${HELP_LISTS.alertRulesFile})`,
    options: [
      {
        flags: "--out <dir>",
        help: "directory to write it in (default: standard output)",
      },
    ],
    run: lazy(detect, (m) => m.runDetectCompile),
  },
};
