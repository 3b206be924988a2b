// Builds the frozen Config from the environment, an optional config file and command-line
// overrides; reports every problem at once (ConfigError) so a person fixes them in one go.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import type { z } from "zod";
import { SessionhouseError } from "../util/errors.js";
import { configSchema, type Config } from "./schema.js";
import { defaultAggregationJobs } from "./jobs.js";
import { isCloudHost } from "./cloud.js";
import { unknownFileKeys } from "./keys.js";
import { nearest } from "../util/nearest.js";
import { scrubber } from "../util/logger.js";

export class ConfigError extends SessionhouseError {
  readonly code = "CONFIG_INVALID";
  readonly problems: readonly string[];
  constructor(
    problems: readonly string[],
    hint = "fix the settings listed above (see README, Configuration) and run again",
  ) {
    super(
      `invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`,
      { hint },
    );
    this.problems = problems;
  }
}

/** The hint of a ConfigError that names unknown keys of the config file. */
const UNKNOWN_KEY_HINT =
  "correct or remove each unknown key (docs/configuration.md lists every key) and fix anything else listed above, then run again";

type Env = Readonly<Record<string, string | undefined>>;

/** Environment variables and the config path each one sets. */
const ENV_VARS: ReadonlyArray<readonly [string, string]> = [
  ["SESSIONHOUSE_API_URL", "api.url"],
  ["SESSIONHOUSE_API_KEY", "api.apiKey"],
  ["SESSIONHOUSE_API_EXTRA_HEADERS", "api.extraHeaders"],
  ["SESSIONHOUSE_TIMESTAMP_FORMAT", "api.timestampFormat"],
  ["SESSIONHOUSE_REQUEST_TIMEOUT", "api.requestTimeoutMs"],
  ["SESSIONHOUSE_MAX_RPS", "api.maxRequestsPerSecond"],
  ["SESSIONHOUSE_API_CONNECTIONS", "api.connections"],
  ["SESSIONHOUSE_API_CA_FILE", "api.caFile"],
  ["SESSIONHOUSE_BODY_IDLE_TIMEOUT", "api.bodyIdleTimeoutMs"],
  ["SESSIONHOUSE_MAX_PAGE_BYTES", "api.maxPageBytes"],
  ["SESSIONHOUSE_MAX_RECORD_BYTES", "api.maxRecordBytes"],
  ["CLICKHOUSE_URL", "clickhouse.url"],
  ["CLICKHOUSE_USER", "clickhouse.user"],
  ["CLICKHOUSE_PASSWORD", "clickhouse.password"],
  ["CLICKHOUSE_DATABASE", "clickhouse.database"],
  ["CLICKHOUSE_CA_FILE", "clickhouse.caFile"],
  ["CLICKHOUSE_CLUSTER", "clickhouse.cluster"],
  ["CLICKHOUSE_REPLICATED", "clickhouse.replicated"],
  ["CLICKHOUSE_KEEPER_PATH", "clickhouse.keeperPath"],
  ["CLICKHOUSE_DISTRIBUTED", "clickhouse.distributed"],
  ["CLICKHOUSE_COMPRESS_REQUESTS", "clickhouse.compressRequests"],
  ["GRAFANA_CLICKHOUSE_USER", "clickhouse.grafanaReader"],
  ["SESSIONHOUSE_DATA_DIR", "clickhouse.dataDir"],
  ["SESSIONHOUSE_RETENTION_DAYS", "clickhouse.retentionDays"],
  ["SESSIONHOUSE_HOT_DAYS", "retention.tables.sessions.hotDays"],
  ["SESSIONHOUSE_ROLLUP_RETENTION_DAYS", "retention.rollupRetentionDays"],
  ["SESSIONHOUSE_ROLLUP_SCHEDULE", "retention.rollupSchedule"],
  ["SESSIONHOUSE_ROLLUP_SETTLE_AFTER", "retention.settleAfterMs"],
  ["SESSIONHOUSE_COLD_VOLUME", "retention.coldVolume"],
  ["SESSIONHOUSE_PAGE_SIZE", "sessions.pageSize"],
  ["SESSIONHOUSE_WINDOW", "sessions.windowMs"],
  ["SESSIONHOUSE_LOOKBACK", "sessions.lookbackMs"],
  ["SESSIONHOUSE_INITIAL_LOOKBACK", "sessions.initialLookbackMs"],
  ["SESSIONHOUSE_INSERT_BATCH_ROWS", "sessions.insertBatchRows"],
  ["SESSIONHOUSE_SESSIONS_SCHEDULE", "sessions.schedule"],
  ["SESSIONHOUSE_REFRESH_SCHEDULE", "sessions.refreshSchedule"],
  ["SESSIONHOUSE_VANISH_AFTER_MISSES", "sessions.vanishAfterMisses"],
  ["SESSIONHOUSE_UNKNOWN_STATUS_POLL", "sessions.unknownStatusPollMs"],
  ["SESSIONHOUSE_RECONCILE_SCHEDULE", "sessions.reconcileSchedule"],
  ["SESSIONHOUSE_RECONCILE_DAYS", "sessions.reconcileDays"],
  ["SESSIONHOUSE_MAX_WINDOW_ATTEMPTS", "aggregations.maxWindowAttempts"],
  ["SESSIONHOUSE_MAX_PAGES_PER_WINDOW", "sessions.maxPagesPerWindow"],
  ["SESSIONHOUSE_WINDOW_CONCURRENCY", "sessions.windowConcurrency"],
  ["SESSIONHOUSE_STREAMS", "streams.enabled"],
  ["SESSIONHOUSE_USERS_REFRESH", "streams.usersRefreshMs"],
  ["SESSIONHOUSE_USERS_CONCURRENCY", "streams.usersConcurrency"],
  ["SESSIONHOUSE_AGG_WINDOW_CONCURRENCY", "aggregations.windowConcurrency"],
  ["SESSIONHOUSE_MAX_CONCURRENT_JOBS", "service.maxConcurrentJobs"],
  ["SESSIONHOUSE_SHUTDOWN_DEADLINE", "service.shutdownDeadlineMs"],
  ["SESSIONHOUSE_OPS_HOST", "service.opsHost"],
  ["SESSIONHOUSE_OPS_PORT", "service.opsPort"],
  ["SESSIONHOUSE_READ_ACCESS", "service.readAccess"],
  ["SESSIONHOUSE_READ_HOST", "service.readHost"],
  ["SESSIONHOUSE_READ_PORT", "service.readPort"],
  ["SESSIONHOUSE_READ_MAX_EXECUTION_TIME", "service.readMaxExecutionTimeMs"],
  ["SESSIONHOUSE_READ_MAX_MEMORY", "service.readMaxMemoryBytes"],
  ["SESSIONHOUSE_READ_MAX_RESULT_ROWS", "service.readMaxResultRows"],
  ["SESSIONHOUSE_READ_MAX_RESULT_BYTES", "service.readMaxResultBytes"],
  ["SESSIONHOUSE_LEASE_TTL", "service.leaseTtlMs"],
  ["SESSIONHOUSE_LEASE_RENEW", "service.leaseRenewMs"],
  ["SESSIONHOUSE_CHROMIUM_PATH", "reports.chromiumPath"],
  ["SESSIONHOUSE_DETECTIONS_DIR", "detections.dir"],
  ["SESSIONHOUSE_DETECTIONS_SCHEDULE", "detections.schedule"],
  ["SESSIONHOUSE_DETECTIONS_INITIAL_LOOKBACK", "detections.initialLookbackMs"],
  ["SESSIONHOUSE_DETECTIONS_HISTORICAL_AFTER", "detections.historicalAfterMs"],
  ["SESSIONHOUSE_ARCHIVE_DIR", "archive.dir"],
  ["SESSIONHOUSE_SIGNING_KEY_FILE", "evidence.signingKeyFile"],
  ["SESSIONHOUSE_PUBLIC_KEY_FILE", "evidence.publicKeyFile"],
  ["SESSIONHOUSE_GROUP_READABLE", "files.groupReadable"],
  ["SESSIONHOUSE_LOG_LEVEL", "log.level"],
  ["SESSIONHOUSE_LOG_FORMAT", "log.format"],
];

const ENV_OF_PATH = new Map(ENV_VARS.map(([env, path]) => [path, env]));

/** SESSIONHOUSE_* variables read by other parts of the project, never by the configuration. */
const OTHER_ENV_VARS = [
  // Grafana's data source provisioning (dashboards/provisioning/datasources/clickhouse.yaml).
  "SESSIONHOUSE_CLICKHOUSE_HOST",
  "SESSIONHOUSE_CLICKHOUSE_DATABASE",
  "SESSIONHOUSE_GRAFANA_CLICKHOUSE_USER",
  "SESSIONHOUSE_GRAFANA_CLICKHOUSE_PASSWORD",
  // The tests (test/helpers/).
  "SESSIONHOUSE_TEST_CONTAINERS",
  "SESSIONHOUSE_REPO_ROOT",
];

/**
 * The SESSIONHOUSE_* variables of `env` that nothing reads (a misspelling leaves its setting at
 * the default), each with the name the configuration reads that is nearest to it.
 */
export function unknownEnvironmentVariables(
  env: Env,
): { name: string; nearest: string | undefined }[] {
  const read = [
    ...ENV_VARS.map(([name]) => name),
    "SESSIONHOUSE_API_KEY_FILE",
  ].filter((name) => name.startsWith("SESSIONHOUSE_"));
  const known = new Set([...read, ...OTHER_ENV_VARS]);
  return Object.keys(env)
    .filter((name) => name.startsWith("SESSIONHOUSE_") && !known.has(name))
    .sort()
    .map((name) => ({ name, nearest: nearest(name, read) }));
}

/** One setting as the offline check shows it: its path, variable, value and where it came from. */
export interface SettingLine {
  setting: string;
  variable: string;
  value: string;
  from: string;
}

/**
 * The configuration as `loadConfig` reads it (the API settings may be absent), with every
 * setting that has a variable: what it resolved to (secrets replaced) and where that came from
 * (the variable, the file, the command line, or the default).
 */
export function loadSettingsReport(options: LoadOptions): {
  config: Config;
  settings: SettingLine[];
} {
  const { config, sources } = loadWithSources({ ...options, needsApi: false });
  const scrub = scrubber(secretsOf(config));
  const settings = ENV_VARS.map(([variable, path]): SettingLine => {
    const source = sources.exact(path);
    const value = valueAt(config, path);
    const missing =
      source === undefined && (path === "api.url" || path === "api.apiKey");
    return {
      setting: path,
      variable,
      value: missing ? "(not set)" : scrub(shown(value)),
      from:
        source === undefined
          ? missing
            ? "nowhere: sync, run and doctor's online checks need it"
            : "default"
          : source.kind === "env"
            ? source.name
            : source.kind === "file"
              ? source.file
              : "command line",
    };
  });
  return { config, settings };
}

function valueAt(tree: unknown, path: string): unknown {
  let node = tree;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function shown(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean")
    return String(value);
  return JSON.stringify(value);
}

/** What is said of an unknown variable: "X is set, and no setting reads it (did you mean Y?)". */
export function unknownVariableProblem(v: {
  name: string;
  nearest: string | undefined;
}): string {
  return `${v.name} is set, and no setting reads it${v.nearest === undefined ? "" : ` (did you mean ${v.nearest}?)`}`;
}

export interface LoadOptions {
  env?: Env;
  /** Path of a YAML or JSON config file (`--config`). */
  configFile?: string | undefined;
  /** Values that win over everything (set by commands such as `demo`), by config path. */
  overrides?: Readonly<Record<string, unknown>>;
  /** False for commands that never call the API (migrate, query, status): its settings may be absent. */
  needsApi?: boolean;
}

type Tree = Record<string, unknown>;

function setPath(tree: Tree, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== "object" || next === null || Array.isArray(next))
      node[key] = {};
    node = node[key] as Tree;
  }
  node[keys[keys.length - 1] ?? ""] = value;
}

/** Where a setting was given: the variable that set it, the config file, or the command. */
type Source =
  | { kind: "env"; name: string }
  | { kind: "file"; file: string }
  | { kind: "command" };

/**
 * The source of every setting given, by config path; a later source of a path (the
 * environment over the file, the command over both) replaces an earlier one, as the values do.
 */
class Sources {
  readonly #byPath = new Map<string, Source>();

  set(path: string, source: Source): void {
    this.#byPath.set(path, source);
  }

  /** Every path of a config file's tree (each mapping and its members, each list element). */
  setTree(value: unknown, file: string, path: readonly string[] = []): void {
    if (path.length > 0) this.set(path.join("."), { kind: "file", file });
    if (Array.isArray(value))
      value.forEach((v, i) => this.setTree(v, file, [...path, String(i)]));
    else if (typeof value === "object" && value !== null)
      for (const [k, v] of Object.entries(value))
        this.setTree(v, file, [...path, k]);
  }

  /** The source of `path`, or of the nearest mapping above it that was given whole. */
  of(path: string): Source | undefined {
    for (
      let p = path;
      p !== "";
      p = p.slice(0, Math.max(0, p.lastIndexOf(".")))
    ) {
      const source = this.#byPath.get(p);
      if (source !== undefined) return source;
    }
    return undefined;
  }

  /** The source that gave `path` itself; undefined when it was given with no mapping above it either. */
  exact(path: string): Source | undefined {
    return this.#byPath.get(path);
  }

  /**
   * A setting as its source names it: the variable that set it, `path in <file>`, the path
   * given by the command, or (given nowhere) its variable and path.
   */
  nameOf(path: string): string {
    const source = this.of(path);
    const env = ENV_OF_PATH.get(path);
    if (source?.kind === "env") return source.name;
    if (source?.kind === "file") return `${path} in ${source.file}`;
    if (source?.kind === "command" || env === undefined) return path;
    return `${env} (${path})`;
  }

  /**
   * The name a setting goes by in a message about another one (no file named): the variable
   * that set it, its path when the file or the command gave it, else its variable.
   */
  shortName(path: string): string {
    const source = this.#byPath.get(path);
    if (source?.kind === "env") return source.name;
    return source === undefined ? (ENV_OF_PATH.get(path) ?? path) : path;
  }
}

function parseHeaders(
  text: string,
  problems: string[],
): Record<string, string> | undefined {
  // "Name: value; Other: value" or a JSON object: both read naturally in an env file.
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      return JSON.parse(trimmed) as Record<string, string>;
    } catch {
      problems.push("SESSIONHOUSE_API_EXTRA_HEADERS is not valid JSON");
      return undefined;
    }
  }
  const out: Record<string, string> = {};
  const parts = trimmed.split(";").filter((p) => p.trim() !== "");
  for (const [n, part] of parts.entries()) {
    const i = part.indexOf(":");
    if (i <= 0) {
      // Named by its position: the part may be a token whose name was left out.
      problems.push(
        `SESSIONHOUSE_API_EXTRA_HEADERS: part ${n + 1} of ${parts.length} is not "Name: value" (separate headers with ;)`,
      );
      continue;
    }
    out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

function readFileTree(file: string, problems: string[]): Tree {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    problems.push(
      `config file ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
    return {};
  }
  try {
    const parsed: unknown = /\.json$/i.test(file)
      ? JSON.parse(text)
      : parseYaml(text);
    if (parsed === null || parsed === undefined) return {};
    if (typeof parsed !== "object" || Array.isArray(parsed)) {
      problems.push(
        `config file ${file} must hold a mapping of sections (api, clickhouse, sessions, …)`,
      );
      return {};
    }
    return parsed as Tree;
  } catch (err) {
    problems.push(
      `config file ${file} does not parse: ${(err as Error).message.split("\n")[0]}`,
    );
    return {};
  }
}

/** `top` over `base`: mappings merged member by member, anything else replaced. */
export function deepMerge(base: Tree, top: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(top)) {
    const b = out[k];
    out[k] =
      typeof v === "object" &&
      v !== null &&
      !Array.isArray(v) &&
      typeof b === "object" &&
      b !== null &&
      !Array.isArray(b)
        ? deepMerge(b as Tree, v as Tree)
        : v;
  }
  return out;
}

/**
 * A schema problem, naming the setting as it was given: a value from the environment by its
 * variable (as the schema's messages do), one from the config file by its path in the file, one
 * given nowhere (a required setting) by its variable and path.
 */
function describeProblem(problem: z.core.$ZodIssue, sources: Sources): string {
  const path = problem.path.map(String).join(".");
  const env = ENV_OF_PATH.get(path);
  const source = path === "" ? undefined : sources.of(path);
  if (source === undefined || source.kind === "env") {
    const where = env ? `${env} (${path})` : path || "config";
    // Messages that already name the variable read better on their own.
    return env && problem.message.includes(env)
      ? problem.message
      : `${where}: ${problem.message}`;
  }
  return `${sources.nameOf(path)}: ${messageAbout(problem.message, path, sources)}`;
}

/**
 * A schema message for a setting given in the file or by the command: without the subject the
 * schema wrote it with (`SESSIONHOUSE_PAGE_SIZE must be …` is `must be …`), and every other
 * variable it names as that setting was given.
 */
function messageAbout(message: string, path: string, sources: Sources): string {
  const subjects = [
    ENV_OF_PATH.get(path),
    path,
    path.slice(path.lastIndexOf(".") + 1),
  ];
  let text = message;
  for (const subject of subjects)
    if (subject !== undefined && text.startsWith(`${subject} `)) {
      text = text.slice(subject.length + 1);
      break;
    }
  for (const [name, other] of ENV_VARS)
    text = text.replace(new RegExp(`\\b${name}\\b`, "g"), () =>
      sources.shortName(other),
    );
  return text;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Reads and validates the configuration; throws ConfigError listing every problem. */
export function loadConfig(options: LoadOptions = {}): Config {
  return loadWithSources(options).config;
}

function loadWithSources(options: LoadOptions): {
  config: Config;
  sources: Sources;
} {
  const env = options.env ?? process.env;
  const problems: string[] = [];
  // Lowest first: the sections, the config file, the environment, then the overrides.
  let tree: Tree = {
    api: {},
    clickhouse: {},
    sessions: {},
    aggregations: {},
    streams: {},
    service: {},
    retention: {},
    reports: {},
    detections: {},
    archive: {},
    evidence: {},
    files: {},
    log: {},
  };
  let hint: string | undefined;
  const sources = new Sources();
  if (options.configFile) {
    const file = readFileTree(options.configFile, problems);
    const unknown = unknownFileKeys(file, options.configFile);
    if (unknown.length > 0) hint = UNKNOWN_KEY_HINT;
    problems.push(...unknown);
    sources.setTree(file, options.configFile);
    tree = deepMerge(tree, file);
  }
  tree = deepMerge(tree, readEnvTree(env, problems, sources));
  problems.push(...sessionsRetentionAlias(tree, sources));
  if (options.needsApi === false) fillApiPlaceholders(tree);
  for (const [path, value] of Object.entries(options.overrides ?? {})) {
    if (value === undefined) continue;
    setPath(tree, path, value);
    sources.set(path, { kind: "command" });
  }
  try {
    return { config: validate(tree, problems, hint, sources), sources };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // A setting reported missing or wrong may be one whose variable is misspelt.
    const misspelt = unknownEnvironmentVariables(env).map(
      unknownVariableProblem,
    );
    if (misspelt.length === 0) throw err;
    throw new ConfigError([...err.problems, ...misspelt], err.hint);
  }
}

/**
 * The settings of the environment variables (ENV_VARS and SESSIONHOUSE_API_KEY_FILE) as a tree;
 * each one's variable noted in `sources` when given.
 */
function readEnvTree(env: Env, problems: string[], sources?: Sources): Tree {
  const fromEnv: Tree = {};
  const set = (name: string, path: string, value: unknown) => {
    setPath(fromEnv, path, value);
    sources?.set(path, { kind: "env", name });
  };
  for (const [name, path] of ENV_VARS) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    if (name === "SESSIONHOUSE_API_EXTRA_HEADERS") {
      const headers = parseHeaders(raw, problems);
      if (headers) set(name, path, headers);
    } else {
      set(name, path, raw);
    }
  }
  const keyFile = env.SESSIONHOUSE_API_KEY_FILE;
  if (keyFile) {
    const apiKey = readKeyFile(keyFile, env, problems);
    if (apiKey !== undefined)
      set("SESSIONHOUSE_API_KEY_FILE", "api.apiKey", apiKey);
  }
  return fromEnv;
}

/** The API key held in SESSIONHOUSE_API_KEY_FILE; undefined (and a problem) when it cannot be used. */
function readKeyFile(
  keyFile: string,
  env: Env,
  problems: string[],
): string | undefined {
  if (env.SESSIONHOUSE_API_KEY) {
    problems.push(
      "set either SESSIONHOUSE_API_KEY or SESSIONHOUSE_API_KEY_FILE, not both",
    );
    return undefined;
  }
  try {
    return readFileSync(keyFile, "utf8").trim();
  } catch (err) {
    problems.push(
      `SESSIONHOUSE_API_KEY_FILE ${keyFile} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
    return undefined;
  }
}

/** The key of a command that never calls the API when none is set: no secret. */
const API_KEY_PLACEHOLDER = "not-configured";
const API_URL_PLACEHOLDER = "http://api.not-configured.invalid";

/** True when the API settings were not given (a command that never calls the API filled them in). */
export function apiNotConfigured(config: Config): boolean {
  return (
    config.api.url === API_URL_PLACEHOLDER ||
    config.api.apiKey === API_KEY_PLACEHOLDER
  );
}

/** For commands that never call the API: a URL and key that pass validation where none are set. */
/**
 * retention.tables.sessions.retentionDays, written where the other tables' retention is, sets
 * clickhouse.retentionDays (the one setting of the sessions' retention) when nothing else set it;
 * the environment still wins over the file. Given both ways with different values, a problem.
 */
function sessionsRetentionAlias(tree: Tree, sources: Sources): string[] {
  const tables = valueAt(tree, "retention.tables.sessions") as Tree | undefined;
  const alias = tables?.retentionDays;
  if (alias === undefined) return [];
  const given = valueAt(tree, "clickhouse.retentionDays");
  if (given === undefined) {
    setPath(tree, "clickhouse.retentionDays", alias);
    return [];
  }
  if (sources.exact("clickhouse.retentionDays")?.kind === "env") return [];
  return shown(given) === shown(alias)
    ? []
    : [
        `${sources.nameOf("retention.tables.sessions.retentionDays")} (${shown(alias)}) and ${sources.nameOf("clickhouse.retentionDays")} (${shown(given)}) both set the sessions' retention: give one`,
      ];
}

function fillApiPlaceholders(tree: Tree): void {
  const api = (tree.api ?? {}) as Tree;
  tree.api = {
    ...api,
    url: api.url ?? API_URL_PLACEHOLDER,
    apiKey: api.apiKey ?? API_KEY_PLACEHOLDER,
  };
}

/** The frozen Config, with the default aggregation jobs when none are configured; or ConfigError. */
function validate(
  tree: Tree,
  problems: string[],
  hint: string | undefined,
  sources: Sources,
): Config {
  const parsed = configSchema.safeParse(tree);
  if (!parsed.success)
    problems.push(
      ...parsed.error.issues.map((i) => describeProblem(i, sources)),
    );
  if (problems.length > 0 || !parsed.success)
    throw new ConfigError(problems, hint);

  const config = parsed.data;
  const jobs = config.aggregations.jobs ?? defaultAggregationJobs();
  problems.push(...duplicateJobNames(jobs, sources));
  problems.push(...clusterProblems(config.clickhouse, sources));
  if (problems.length > 0) throw new ConfigError(problems, hint);
  return deepFreeze({
    ...config,
    aggregations: { ...config.aggregations, jobs },
  });
}

/** Cluster settings that cannot work together, each with the reason, named as they were given. */
function clusterProblems(ch: Config["clickhouse"], sources: Sources): string[] {
  const problems: string[] = [];
  const given = (key: string) => sources.nameOf(`clickhouse.${key}`);
  const other = (key: string) => sources.shortName(`clickhouse.${key}`);
  if (!ch.cluster) {
    if (ch.replicated)
      problems.push(
        `${given("replicated")} needs ${other("cluster")}: the replicated tables are created ON CLUSTER`,
      );
    if (ch.distributed)
      problems.push(
        `${given("distributed")} needs ${other("cluster")}: the Distributed tables name the cluster`,
      );
    return problems;
  }
  if (!ch.url)
    problems.push(
      `${given("cluster")} needs ${other("url")}: the embedded engine is one process, not a cluster`,
    );
  else if (isCloudHost(ch.url))
    problems.push(
      `${given("cluster")} is set for ClickHouse Cloud, which replicates by itself: leave ${other("cluster")}, ${other("replicated")} and ${other("distributed")} unset`,
    );
  if (ch.distributed && !ch.replicated)
    problems.push(
      `${given("distributed")} needs ${other("replicated")}=true: the checkpoints and other bookkeeping are kept on every node by replication, or a node would read another's state`,
    );
  return problems;
}

function duplicateJobNames(
  jobs: readonly { name: string }[],
  sources: Sources,
): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const job of jobs) {
    if (seen.has(job.name))
      problems.push(
        `${sources.nameOf("aggregations.jobs")}: the job name "${job.name}" is used twice`,
      );
    seen.add(job.name);
  }
  return problems;
}

/** A secret of the configuration and the setting that holds it (the name a person knows). */
interface SecretSetting {
  setting: string;
  value: string;
}

/** The settings a configuration (or a partial one, as the environment gives it) holds secrets in. */
interface SecretSources {
  api?: { apiKey?: unknown; extraHeaders?: unknown };
  clickhouse?: { password?: unknown; url?: unknown };
}

/** An Authorization-style value, `<scheme> <credentials>`: the credentials are a secret alone too. */
const AUTH_SCHEME_VALUE = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*\s+(\S.*)$/;

/**
 * Every secret setting: the API key, the ClickHouse password (also inside CLICKHOUSE_URL), and
 * the value of every extra request header (they carry tokens: Authorization, a tenant key).
 * Signing keys are read from their file straight into a key object, never held as text.
 */
function secretSettings(tree: SecretSources): SecretSetting[] {
  const out: SecretSetting[] = [];
  const add = (path: string, value: unknown, header?: string) => {
    if (typeof value === "string" && value !== "")
      out.push({ setting: settingName(path, header), value });
  };
  if (tree.api?.apiKey !== API_KEY_PLACEHOLDER)
    add("api.apiKey", tree.api?.apiKey);
  add("clickhouse.password", tree.clickhouse?.password);
  const url = tree.clickhouse?.url;
  if (typeof url === "string") {
    const password = urlPassword(url);
    add("clickhouse.url", password);
    add("clickhouse.url", safeDecode(password));
  }
  const headers = tree.api?.extraHeaders;
  if (typeof headers === "object" && headers !== null)
    for (const [name, value] of Object.entries(headers)) {
      add("api.extraHeaders", value, name);
      if (typeof value === "string")
        add(
          "api.extraHeaders",
          AUTH_SCHEME_VALUE.exec(value.trim())?.[1],
          name,
        );
    }
  return out;
}

/** `SESSIONHOUSE_API_KEY (api.apiKey)`; a header as `… (api.extraHeaders), Name`. */
function settingName(path: string, header?: string): string {
  const env = ENV_OF_PATH.get(path);
  const name = env ? `${env} (${path})` : path;
  return header === undefined ? name : `${name}, ${header}`;
}

function urlPassword(url: string): string {
  try {
    return new URL(url).password;
  } catch {
    return "";
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Every secret of a config, whatever its length, for redaction of logs, errors and metrics. */
export function secretsOf(config: Config): string[] {
  return [...new Set(secretSettings(config).map((s) => s.value))];
}

/**
 * The secrets of the environment, before (or without) a valid configuration: for the CLI's
 * last error line when the configuration cannot be loaded.
 */
export function secretsOfEnvironment(env: Env = process.env): string[] {
  const tree = readEnvTree(env, []);
  return [...new Set(secretSettings(tree).map((s) => s.value))];
}

/**
 * Below this length a secret is easy to guess, and matches ordinary text: every occurrence of it
 * in log lines, errors and the runs table is still replaced, which makes them hard to read.
 */
export const RECOMMENDED_SECRET_LENGTH = 16;

/** The settings holding a secret shorter than RECOMMENDED_SECRET_LENGTH, by name and length. */
export function shortSecrets(
  config: Config,
): { setting: string; length: number }[] {
  const seen = new Set<string>();
  const out: { setting: string; length: number }[] = [];
  for (const s of secretSettings(config)) {
    if (s.value.length >= RECOMMENDED_SECRET_LENGTH || seen.has(s.setting))
      continue;
    seen.add(s.setting);
    out.push({ setting: s.setting, length: s.value.length });
  }
  return out;
}
