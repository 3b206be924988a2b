// The one typed configuration of the service: every option, its default and its unit, in one
// place. Sources (environment, config file, flags) are merged in load.ts and validated
// here; the result is frozen.
import { z } from "zod";
import { parseDurationMs } from "../util/duration.js";

/** A duration given as "15m", "1h", "30s" or milliseconds; stored as milliseconds. */
const durationMs = (what: string) =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    const ms = parseDurationMs(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${what} must be a duration such as 30s, 15m, 1h, 7d or milliseconds, got "${String(value)}"`,
      });
      return z.NEVER;
    }
    return ms;
  });

const intFrom = (what: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${what} must be a number` })
    .int(`${what} must be a whole number`)
    .min(min, `${what} must be at least ${min}`)
    .max(max, `${what} must be at most ${max}`);

const httpUrl = (what: string) =>
  z
    .string({ error: `${what} is required` })
    .trim()
    .min(1, `${what} is required`)
    .refine((u) => {
      try {
        const p = new URL(u).protocol;
        return p === "http:" || p === "https:";
      } catch {
        return false;
      }
    }, `${what} must be an http:// or https:// URL`);

/** Group-by fields of an aggregation job: dotted log-field paths, at most three. */
export const MAX_GROUP_BY_FIELDS = 3;

export const aggregationJobSchema = z.object({
  /** Unique name; used in tables, checkpoints and `--job`. */
  name: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9_-]{0,62}$/,
      "job name must be lower-case letters, digits, - or _ (max 63)",
    ),
  /** Quickwit query string; empty means every log. */
  query: z.string().default(""),
  /** Histogram step, "30s" … "1d" (default 5m). */
  interval: z
    .string()
    .regex(
      /^\d+(s|m|h|d)$/,
      'interval must look like "30s", "5m", "1h" or "1d"',
    )
    .refine((v) => !/^0+[smhd]$/.test(v), "interval must be longer than 0")
    .default("5m"),
  /** Up to three dotted field paths (resource.technology, user.email, policy.name, …). */
  groupBy: z
    .array(z.string().min(1))
    .max(
      MAX_GROUP_BY_FIELDS,
      `at most ${MAX_GROUP_BY_FIELDS} group-by fields are allowed`,
    )
    .default([]),
  /** Size of one fetched window, more than 0 (default 1h). */
  windowMs: durationMs("windowMs")
    .refine((ms) => ms > 0, "windowMs must be longer than 0")
    .default(3_600_000),
  /** Trailing period re-fetched on every run because counts grow as logs arrive (default 2h). */
  refetchMs: durationMs("refetchMs").default(7_200_000),
  /** Cron schedule in UTC (default every five minutes). */
  schedule: z.string().default("*/5 * * * *"),
  enabled: z.boolean().default(true),
});
export type AggregationJobConfig = z.infer<typeof aggregationJobSchema>;

/** Hot days and retention days of one table (0 = never). */
const tierSchema = (table: string) =>
  z
    .object({
      hotDays: intFrom(`retention.tables.${table}.hotDays`, 0, 100_000).default(
        0,
      ),
      retentionDays: intFrom(
        `retention.tables.${table}.retentionDays`,
        0,
        100_000,
      ).default(0),
    })
    .default({ hotDays: 0, retentionDays: 0 });
/** The kinds of compliance report (src/reports/kinds). */
export const REPORT_KINDS = [
  "access-review",
  "policy-exceptions",
  "sensitive-data-access",
  "coverage-and-integrity",
] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

/** The formats a report directory can hold beside manifest.json. */
export const REPORT_FORMATS = ["html", "pdf", "csv", "json"] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** A report `run` writes on its own schedule, over the period before the tick. */
const reportScheduleSchema = z.object({
  kind: z.enum(REPORT_KINDS),
  /** Cron schedule in UTC, e.g. "0 6 1 * *" (06:00 on the 1st). */
  cron: z.string().min(1),
  /** The period reported: the calendar month or ISO week (Monday to Monday) before the tick. */
  range: z.enum(["previous-month", "previous-week", "previous-day"]),
  /** Formats written (default all). */
  format: z
    .array(z.enum(REPORT_FORMATS))
    .min(1)
    .default([...REPORT_FORMATS]),
  /** Directory under which each report gets its own <kind>-<from>-<to> directory. */
  out: z.string().min(1),
  /** Filters as on the command line: user=…,resource=…,environment=… (default none). */
  filter: z.string().default(""),
});
export type ReportScheduleConfig = z.infer<typeof reportScheduleSchema>;

/** The log levels, most severe first (`log.level`, `--log-level`). */
export const LOG_LEVELS = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
] as const;

export const configSchema = z.object({
  api: z.object({
    /** Base URL of the control plane, e.g. https://api.example.com (required; no default). */
    url: httpUrl("SESSIONHOUSE_API_URL"),
    /** API key sent as X-API-KEY; from SESSIONHOUSE_API_KEY or the file SESSIONHOUSE_API_KEY_FILE. */
    apiKey: z
      .string({
        error:
          "SESSIONHOUSE_API_KEY (or SESSIONHOUSE_API_KEY_FILE) is required",
      })
      .min(
        1,
        "SESSIONHOUSE_API_KEY (or SESSIONHOUSE_API_KEY_FILE) is required",
      ),
    /** Extra request headers (the vendor SDK sends an API-version header). */
    extraHeaders: z.record(z.string(), z.string()).default({}),
    /** Format of request timestamps: Unix seconds (default) or RFC 3339. */
    timestampFormat: z.enum(["unix", "rfc3339"]).default("unix"),
    /** Wait for an answer's headers (default 60s); reading the body is bounded by bodyIdleTimeoutMs. */
    requestTimeoutMs: durationMs("request timeout").default(60_000),
    /** A response body that sends no byte for this long is retried (default 60s). */
    bodyIdleTimeoutMs: durationMs("SESSIONHOUSE_BODY_IDLE_TIMEOUT").default(
      60_000,
    ),
    /** Largest answer read, in bytes (default 2 GiB); past it the run fails. */
    maxPageBytes: intFrom(
      "SESSIONHOUSE_MAX_PAGE_BYTES",
      1024,
      Number.MAX_SAFE_INTEGER,
    ).default(2 * 2 ** 30),
    /** Largest session record, in bytes (default 64 MiB); past it the record is a dead letter. */
    maxRecordBytes: intFrom(
      "SESSIONHOUSE_MAX_RECORD_BYTES",
      1024,
      Number.MAX_SAFE_INTEGER,
    ).default(64 * 2 ** 20),
    /** Ceiling on requests per second toward the API (default 20). */
    maxRequestsPerSecond: z.coerce.number().positive().default(20),
    /** Retries of one request for retryable failures (default 6). */
    maxRetries: intFrom("maxRetries", 0, 100).default(6),
    /** First backoff step; doubles each retry with full jitter (default 500ms). */
    retryBaseMs: durationMs("retryBaseMs").default(500),
    /** Longest wait between two tries (default 30s). */
    retryMaxMs: durationMs("retryMaxMs").default(30_000),
    /** Retries one run may spend across all its requests (default 200). */
    runRetryBudget: intFrom("runRetryBudget", 0, 100_000).default(200),
    /** PEM file of a CA to trust for the API (private PKI). */
    caFile: z.string().optional(),
    /** Keep-alive connections to the API (default 4). */
    connections: intFrom("SESSIONHOUSE_API_CONNECTIONS", 1, 64).default(4),
  }),
  clickhouse: z.object({
    /** Server URL; when absent the embedded engine (chdb) is used under dataDir. */
    url: z.string().optional(),
    user: z.string().default("default"),
    password: z.string().default(""),
    /** Database for every table (default sessionhouse). */
    database: z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_]{0,63}$/,
        "CLICKHOUSE_DATABASE must be letters, digits and _",
      )
      .default("sessionhouse"),
    /** Embedded engine's data directory (default ./data). */
    dataDir: z.string().min(1).default("./data"),
    /** Per-statement timeout toward a server (default 5m). */
    requestTimeoutMs: durationMs("ClickHouse request timeout").default(300_000),
    /** Drop sessions older than this many days (0 = keep forever, the default). */
    retentionDays: intFrom("SESSIONHOUSE_RETENTION_DAYS", 0, 100_000).default(
      0,
    ),
    /** PEM file of a CA to trust for a https ClickHouse. */
    caFile: z.string().optional(),
    /** Retries of a failed insert (same deduplication token) before the run fails (default 5). */
    insertRetries: intFrom("insertRetries", 0, 100).default(5),
    /** Cluster every DDL runs `ON CLUSTER` (unset: one server, or ClickHouse Cloud). */
    cluster: z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_-]{0,127}$/,
        "CLICKHOUSE_CLUSTER must be a cluster name of letters, digits, _ and -",
      )
      .optional(),
    /** Replicated* engines with the {shard} and {replica} macros (needs cluster; default false). */
    replicated: z
      .union([z.boolean(), z.stringbool()], {
        error: "CLICKHOUSE_REPLICATED must be true or false",
      })
      .default(false),
    /** Keeper path under which replicated tables live: <keeperPath>/{shard}/<db>/<table>. */
    keeperPath: z
      .string()
      .regex(
        /^\/[A-Za-z0-9_.\-{}/]*$/,
        "CLICKHOUSE_KEEPER_PATH must be an absolute Keeper path of letters, digits, _ . - { } and /",
      )
      .default("/clickhouse/tables"),
    /** A <table>_local per shard and a Distributed table over them (needs replicated; default false). */
    distributed: z
      .union([z.boolean(), z.stringbool()], {
        error: "CLICKHOUSE_DISTRIBUTED must be true or false",
      })
      .default(false),
    /**
     * Grafana's ClickHouse user (GRAFANA_CLICKHOUSE_USER, as the Docker Compose stack names it),
     * whose grants `doctor` holds to dashboards/provisioning/clickhouse/grafana-reader.sh
     * (default: none, not checked).
     */
    grafanaReader: z.string().trim().min(1).optional(),
    /**
     * Gzip what is sent to a server: less traffic, at the CPU cost of compressing every insert on
     * the exporter and decompressing it on the server (on one host it halves the sync's rate).
     * Unset: only toward ClickHouse Cloud, which is reached over the internet.
     */
    compressRequests: z
      .union([z.boolean(), z.stringbool()], {
        error: "CLICKHOUSE_COMPRESS_REQUESTS must be true or false",
      })
      .optional(),
  }),
  sessions: z.object({
    /** ListSessionsV2 page size, 1..100000 (default 10000). */
    pageSize: intFrom("SESSIONHOUSE_PAGE_SIZE", 1, 100_000).default(10_000),
    /** Time window paged in one go (default 6h); the checkpoint moves once per window. */
    windowMs: durationMs("SESSIONHOUSE_WINDOW").default(6 * 3_600_000),
    /** Re-read this much before the checkpoint on every sync, for late sessions (default 1h). */
    lookbackMs: durationMs("SESSIONHOUSE_LOOKBACK").default(3_600_000),
    /** First sync without a checkpoint starts this far back (default 7d). */
    initialLookbackMs: durationMs("SESSIONHOUSE_INITIAL_LOOKBACK").default(
      7 * 86_400_000,
    ),
    /**
     * Rows per ClickHouse insert (default 100000; a block also goes out at 64 MB, about 89000
     * simulated sessions). Fewer, larger parts: a 1M-session backfill in 20000-row blocks spent
     * twice the CPU on background merges, and 50000-row blocks about 15% more CPU than these.
     */
    insertBatchRows: intFrom("insertBatchRows", 1, 1_000_000).default(100_000),
    /** Pages in a row holding only sessions seen earlier in the window before the sync stops (default 3). */
    maxStalledPages: intFrom("maxStalledPages", 1, 1000).default(3),
    /**
     * Windows of a sessions sync fetched at once (default 1). Against a remote API every page
     * waits for the server; more windows side by side use more of the connections. Each window
     * holds its own insert block, so memory grows with it; checkpoints stay in window order.
     */
    windowConcurrency: intFrom(
      "SESSIONHOUSE_WINDOW_CONCURRENCY",
      1,
      64,
    ).default(1),
    /** Pages one window may take before the sync stops with TOO_MANY_PAGES (default 10000). */
    maxPagesPerWindow: intFrom(
      "SESSIONHOUSE_MAX_PAGES_PER_WINDOW",
      1,
      10_000_000,
    ).default(10_000),
    /** Cron schedule of the sessions job in UTC (default every minute). */
    schedule: z.string().default("* * * * *"),
    /** Cron schedule of the open-session refresh in UTC (default every three minutes). */
    refreshSchedule: z.string().default("*/3 * * * *"),
    /** An open session GetSession answers not_found this many times in a row is vanished (default 3). */
    vanishAfterMisses: intFrom(
      "SESSIONHOUSE_VANISH_AFTER_MISSES",
      1,
      1000,
    ).default(3),
    /** A session in a status not known to be open is re-read until it is this old (default 7d). */
    unknownStatusPollMs: durationMs("SESSIONHOUSE_UNKNOWN_STATUS_POLL").default(
      7 * 86_400_000,
    ),
    /** Cron schedule of the reconciliation in UTC (default hourly, at minute 17). */
    reconcileSchedule: z.string().default("17 * * * *"),
    /** Days before the checkpoint the reconciliation lists again; 0 turns it off (default 3). */
    reconcileDays: intFrom("SESSIONHOUSE_RECONCILE_DAYS", 0, 3650).default(3),
  }),
  aggregations: z.object({
    jobs: z.array(aggregationJobSchema).optional(),
    /**
     * Windows of one aggregation job fetched at once (default 1), at most api.connections; the
     * stored batches and the checkpoint stay in window order.
     */
    windowConcurrency: intFrom(
      "SESSIONHOUSE_AGG_WINDOW_CONCURRENCY",
      1,
      64,
    ).default(1),
    /** Failed fetches of one window before it is poisoned and waits for an operator (default 5). */
    maxWindowAttempts: intFrom(
      "SESSIONHOUSE_MAX_WINDOW_ATTEMPTS",
      1,
      1000,
    ).default(5),
  }),
  streams: z.object({
    /** The entity streams (users, devices, native users, links, inventory, suspensions, clouds) run under `run` (default true). */
    enabled: z
      .union([z.boolean(), z.stringbool()], {
        error: "SESSIONHOUSE_STREAMS must be true or false",
      })
      .default(true),
    /** Cron schedules (UTC) of each stream. */
    usersSchedule: z.string().default("*/10 * * * *"),
    userDevicesSchedule: z.string().default("23 2 * * *"),
    nativeUsersSchedule: z.string().default("41 2 * * *"),
    identityLinksSchedule: z.string().default("7 * * * *"),
    inventorySchedule: z.string().default("53 3 * * *"),
    policySuspensionsSchedule: z.string().default("*/5 * * * *"),
    cloudsSchedule: z.string().default("29 4 * * *"),
    /** A user read longer ago than this is read again (default 1d); new ids are read at once. */
    usersRefreshMs: durationMs("SESSIONHOUSE_USERS_REFRESH").default(
      86_400_000,
    ),
    /** GetUser calls in flight at once (default 4; the API's rate ceiling still applies). */
    usersConcurrency: intFrom("SESSIONHOUSE_USERS_CONCURRENCY", 1, 64).default(
      4,
    ),
  }),
  service: z
    .object({
      /** Jobs of different kinds running at once (default 2). */
      maxConcurrentJobs: intFrom("maxConcurrentJobs", 1, 32).default(2),
      /** On SIGTERM, how long the current step may take before it is aborted (default 30s). */
      shutdownDeadlineMs: durationMs("shutdown deadline").default(30_000),
      /** Operations HTTP server (healthz, readyz, metrics) on 127.0.0.1:9464; port 0 picks a free one. */
      opsHost: z.string().default("127.0.0.1"),
      opsPort: intFrom("SESSIONHOUSE_OPS_PORT", 0, 65_535).default(9464),
      /**
       * On the embedded engine, `run` serves read-only ClickHouse HTTP access to its data directory
       * here, so that `status`, `query` and Grafana work while it holds the engine (default
       * 127.0.0.1, port 0 = a free one; the URL and token go to <dataDir>/.sessionhouse-service.json).
       */
      readAccess: z
        .union([z.boolean(), z.stringbool()], {
          error: "SESSIONHOUSE_READ_ACCESS must be true or false",
        })
        .default(true),
      readHost: z.string().default("127.0.0.1"),
      readPort: intFrom("SESSIONHOUSE_READ_PORT", 0, 65_535).default(0),
      /** Cap on one query's execution time through that access (default 60s). */
      readMaxExecutionTimeMs: durationMs("SESSIONHOUSE_READ_MAX_EXECUTION_TIME")
        .refine(
          (ms) => ms >= 1000,
          "SESSIONHOUSE_READ_MAX_EXECUTION_TIME must be at least 1s",
        )
        .default(60_000),
      /** Cap on one query's memory through that access, in bytes (default 1 GiB). */
      readMaxMemoryBytes: intFrom(
        "SESSIONHOUSE_READ_MAX_MEMORY",
        1 << 20,
        Number.MAX_SAFE_INTEGER,
      ).default(2 ** 30),
      /**
       * Cap on the rows of one query's result through that access (default 1,000,000): a larger
       * result fails with a message naming the cap, rather than filling the service's memory.
       */
      readMaxResultRows: intFrom(
        "SESSIONHOUSE_READ_MAX_RESULT_ROWS",
        1,
        Number.MAX_SAFE_INTEGER,
      ).default(1_000_000),
      /** Cap on the bytes (in memory) of one query's result through that access (default 1 GiB). */
      readMaxResultBytes: intFrom(
        "SESSIONHOUSE_READ_MAX_RESULT_BYTES",
        1 << 20,
        Number.MAX_SAFE_INTEGER,
      ).default(2 ** 30),
      /**
       * The service lease (docs/scale-out.md): a claim that is not renewed lapses this long after
       * it was written, so a process killed without releasing it is replaced after at most this
       * long (default 30s; 1s to 1h).
       */
      leaseTtlMs: durationMs("SESSIONHOUSE_LEASE_TTL")
        .refine(
          (ms) => ms >= 1000 && ms <= 3_600_000,
          "SESSIONHOUSE_LEASE_TTL must be between 1s and 1h",
        )
        .default(30_000),
      /** How often the holder renews the lease and a waiting process tries again (default 10s). */
      leaseRenewMs: durationMs("SESSIONHOUSE_LEASE_RENEW")
        .refine(
          (ms) => ms >= 100,
          "SESSIONHOUSE_LEASE_RENEW must be at least 100 ms",
        )
        .default(10_000),
    })
    // Only against a TTL that is itself valid: a refused TTL is the one problem to report.
    .refine((s) => s.leaseTtlMs < 1000 || s.leaseRenewMs * 2 <= s.leaseTtlMs, {
      message:
        "SESSIONHOUSE_LEASE_RENEW must be at most half of SESSIONHOUSE_LEASE_TTL, so that a renewal that fails once is retried before the lease expires",
      path: ["leaseRenewMs"],
    }),
  retention: z.object({
    /** Cron schedule of the daily rollups and the legal-hold sweep in UTC (default hourly, at minute 41). */
    rollupSchedule: z.string().default("41 * * * *"),
    /**
     * A day with sessions still open is rolled up anyway once it ended this long ago (default 7d,
     * as long as a session of unknown status is re-read); until then it waits for them.
     */
    settleAfterMs: durationMs("SESSIONHOUSE_ROLLUP_SETTLE_AFTER").default(
      7 * 86_400_000,
    ),
    /** Days the daily rollups are kept; 0 keeps them forever (the default). */
    rollupRetentionDays: intFrom(
      "SESSIONHOUSE_ROLLUP_RETENTION_DAYS",
      0,
      100_000,
    ).default(0),
    /** Volume of the tables' storage policy that rows older than hotDays move to (default cold). */
    coldVolume: z
      .string()
      .regex(
        /^[A-Za-z0-9_.-]{1,64}$/,
        "SESSIONHOUSE_COLD_VOLUME must be a volume name: letters, digits, _ . -",
      )
      .default("cold"),
    /**
     * Per table: hotDays moves rows older than that to the cold volume (0 = never), retentionDays
     * deletes them (0 = never). The sessions' retention is clickhouse.retentionDays
     * (SESSIONHOUSE_RETENTION_DAYS); held sessions are never deleted.
     */
    tables: z
      .object({
        sessions: z
          .object({
            hotDays: intFrom("SESSIONHOUSE_HOT_DAYS", 0, 100_000).default(0),
            /**
             * The sessions' retention written beside the other tables' in a config file: the
             * same setting as clickhouse.retentionDays (SESSIONHOUSE_RETENTION_DAYS), which it
             * sets when that is not given.
             */
            retentionDays: intFrom(
              "retention.tables.sessions.retentionDays",
              0,
              100_000,
            ).optional(),
          })
          .default({ hotDays: 0 }),
        agg_histogram: tierSchema("agg_histogram"),
        agg_top_values: tierSchema("agg_top_values"),
      })
      .default({
        sessions: { hotDays: 0 },
        agg_histogram: { hotDays: 0, retentionDays: 0 },
        agg_top_values: { hotDays: 0, retentionDays: 0 },
      }),
  }),
  reports: z.object({
    /**
     * Chromium (or Chrome) that renders report.pdf; default: the first of chromium,
     * chromium-browser, google-chrome, google-chrome-stable found on PATH. Without one the PDF
     * is skipped with a message and the other files are produced.
     */
    chromiumPath: z.string().min(1).optional(),
    /** Reports `run` writes on a schedule (default none). */
    schedules: z.array(reportScheduleSchema).default([]),
  }),
  detections: z.object({
    /**
     * A directory of the user's detection rules (YAML), read by `run` and `detect` beside the
     * rules shipped in detections/ (default none).
     */
    dir: z.string().min(1).optional(),
    /** Cron schedule of the detections job in UTC (default every minute). */
    schedule: z.string().default("* * * * *"),
    /** The first evaluation of a rule reads the sessions that arrived this long before it (default 1d). */
    initialLookbackMs: durationMs(
      "SESSIONHOUSE_DETECTIONS_INITIAL_LOOKBACK",
    ).default(86_400_000),
    /**
     * A hit whose event was older than this when its data arrived is historical: recorded and
     * shown, never paged (default: the sessions lookback, sessions.lookbackMs).
     */
    historicalAfterMs: durationMs(
      "SESSIONHOUSE_DETECTIONS_HISTORICAL_AFTER",
    ).optional(),
  }),
  archive: z.object({
    /**
     * The directory of the monthly archives (`archive export` writes one YYYY-MM directory per
     * month into it; its default --to). Set, archiving is configured: the retention's TTL then
     * deletes a row of sessions, agg_histogram or agg_top_values only once `archive export` has
     * written and read back the month it belongs to and marked it archived (default none: the
     * retention deletes by age alone).
     */
    dir: z.string().min(1).optional(),
  }),
  evidence: z.object({
    /**
     * Ed25519 private key (PEM) that signs the manifest.json of every report and archive
     * (default: unsigned). Make one with `openssl genpkey -algorithm ed25519 -out signing.pem`.
     */
    signingKeyFile: z.string().min(1).optional(),
    /**
     * Ed25519 public key (PEM) that `archive verify` and `archive restore` check signatures by
     * when no --public-key is given (default: the public half of signingKeyFile, else none).
     */
    publicKeyFile: z.string().min(1).optional(),
  }),
  files: z.object({
    /**
     * What this process writes (the embedded data directory, reports, the service file) is
     * the owner's only: directories 0700, files 0600. True shares it with the owner's group on
     * purpose: directories 0750, files 0640 (default false). Insert block files stay private.
     */
    groupReadable: z
      .union([z.boolean(), z.stringbool()], {
        error: "SESSIONHOUSE_GROUP_READABLE must be true or false",
      })
      .default(false),
  }),
  log: z.object({
    level: z.enum(LOG_LEVELS).default("info"),
    /** pretty on a terminal, json otherwise (auto). */
    format: z.enum(["auto", "json", "pretty"]).default("auto"),
  }),
});

type ParsedConfig = z.infer<typeof configSchema>;
/** The validated configuration; `aggregations.jobs` is filled with the defaults when absent. */
export type Config = Omit<ParsedConfig, "aggregations"> & {
  aggregations: Omit<ParsedConfig["aggregations"], "jobs"> & {
    jobs: AggregationJobConfig[];
  };
};
