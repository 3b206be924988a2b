// The configuration's own checks: settings that validate, yet will not do what their owner
// likely wants (a schedule that never fires within a year, rollups deleted before the sessions
// they stand for, …). Pure: the configuration and the time in, a finding out.
import {
  apiNotConfigured,
  RECOMMENDED_SECRET_LENGTH,
  shortSecrets,
  unknownEnvironmentVariables,
  unknownVariableProblem,
  type Config,
} from "../../config/index.js";
import { archiveSettleMs } from "../../pipeline/archive/index.js";
import { nextRuns } from "../../scheduler/index.js";
import { serviceSchedules } from "../../scheduler/schedules.js";
import { ok, warn, type Finding, familySpecs } from "./check.js";

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;

/** What the configuration checks need. */
export interface ConfigCheckContext {
  config: Config;
  nowMs: number;
  /** The environment the configuration was read from. */
  env: Readonly<Record<string, string | undefined>>;
}

/** Warnings as one finding: ok with `okText` when there are none. */
function findingOf(
  problems: readonly { found: string; fix: string }[],
  okText: string,
): Finding {
  if (problems.length === 0) return ok(okText);
  return warn(
    problems.map((p) => p.found).join("; "),
    problems.map((p) => p.fix).join("; "),
  );
}

/** Schedules whose next run is more than a year away (node-cron looks ahead without a limit). */
function schedules(ctx: ConfigCheckContext): Finding {
  const all = serviceSchedules(ctx.config);
  const late = all.flatMap(({ what, schedule }) => {
    const [next] = nextRuns(schedule, 1);
    if (next !== undefined && next - ctx.nowMs <= YEAR_MS) return [];
    return [
      {
        found: `${what} "${schedule}" does not fire within a year (next: ${next === undefined ? "never" : new Date(next).toISOString()})`,
        fix: `give ${what} a schedule that fires, e.g. "0 3 * * *"`,
      },
    ];
  });
  return findingOf(
    late,
    `${all.length} schedules, each fires within a year (UTC)`,
  );
}

function days(n: number): string {
  return n === 0 ? "forever" : `${n} days`;
}

/** Retention settings that defeat one another. */
function retention(ctx: ConfigCheckContext): Finding {
  const { clickhouse, retention: r } = ctx.config;
  const sessionsDays = clickhouse.retentionDays;
  const problems: { found: string; fix: string }[] = [];
  if (
    r.rollupRetentionDays > 0 &&
    (sessionsDays === 0 || r.rollupRetentionDays < sessionsDays)
  )
    problems.push({
      found: `the daily rollups are kept ${days(r.rollupRetentionDays)}, shorter than the sessions (${days(sessionsDays)}): long ranges lose the rollups while the sessions are still there`,
      fix: "set SESSIONHOUSE_ROLLUP_RETENTION_DAYS to 0 or to more than SESSIONHOUSE_RETENTION_DAYS",
    });
  if (sessionsDays > 0 && sessionsDays * DAY_MS < r.settleAfterMs)
    problems.push({
      found: `sessions are deleted after ${sessionsDays} days, before a day with open sessions is rolled up (SESSIONHOUSE_ROLLUP_SETTLE_AFTER ${r.settleAfterMs / DAY_MS} days): such days never get their rollups`,
      fix: "raise SESSIONHOUSE_RETENTION_DAYS or lower SESSIONHOUSE_ROLLUP_SETTLE_AFTER",
    });
  if (r.settleAfterMs < ctx.config.sessions.unknownStatusPollMs)
    problems.push({
      found: `a day is rolled up ${r.settleAfterMs / DAY_MS} days after it ended, while a session of unknown status is re-read for ${ctx.config.sessions.unknownStatusPollMs / DAY_MS} days: its later reads miss the rollups`,
      fix: "set SESSIONHOUSE_ROLLUP_SETTLE_AFTER to at least SESSIONHOUSE_UNKNOWN_STATUS_POLL",
    });
  const tiers: [string, number, number][] = [
    ["sessions", r.tables.sessions.hotDays, sessionsDays],
    [
      "agg_histogram",
      r.tables.agg_histogram.hotDays,
      r.tables.agg_histogram.retentionDays,
    ],
    [
      "agg_top_values",
      r.tables.agg_top_values.hotDays,
      r.tables.agg_top_values.retentionDays,
    ],
  ];
  for (const [table, hot, keep] of tiers)
    if (hot > 0 && keep > 0 && hot >= keep)
      problems.push({
        found: `${table}: rows are deleted after ${keep} days, before they move to the cold volume after ${hot} days`,
        fix: `set ${table}'s hotDays below its retention days, or 0`,
      });
  problems.push(...archiveProblems(ctx.config));
  return findingOf(
    problems,
    `sessions kept ${days(sessionsDays)}, rollups ${days(r.rollupRetentionDays)}${ctx.config.archive.dir === undefined ? "" : `, deleted only once archived in ${ctx.config.archive.dir}`}`,
  );
}

/** The longest month, in days: a month is exported whole only after all of it is stored. */
const LONGEST_MONTH_DAYS = 31;

/**
 * A retention that deletes a month's first days before the month can be exported (its end plus
 * the archive's settle time), with no archive directory to hold the TTL back: monthly archives
 * would seal what is left of such months (archive export refuses them once thinned).
 */
function archiveProblems(config: Config): { found: string; fix: string }[] {
  if (config.archive.dir !== undefined) return [];
  const r = config.retention.tables;
  const needMs = LONGEST_MONTH_DAYS * DAY_MS + archiveSettleMs(config);
  return [
    [
      "sessions",
      config.clickhouse.retentionDays,
      "SESSIONHOUSE_RETENTION_DAYS",
    ],
    [
      "agg_histogram",
      r.agg_histogram.retentionDays,
      "retention.tables.agg_histogram.retentionDays",
    ],
    [
      "agg_top_values",
      r.agg_top_values.retentionDays,
      "retention.tables.agg_top_values.retentionDays",
    ],
  ].flatMap(([table, keep, setting]) =>
    Number(keep) > 0 && Number(keep) * DAY_MS < needMs
      ? [
          {
            found: `${String(table)} rows are deleted after ${String(keep)} days (${String(setting)}), whether archived or not, and no archive directory is set: a month can be archived only ${(needMs / DAY_MS).toFixed(1)} days after it starts (its end plus the settle time), when its first days are gone`,
            fix: `set SESSIONHOUSE_ARCHIVE_DIR (archive.dir) to the monthly archives' directory, so the retention deletes only rows archived; or raise ${String(setting)} to at least ${Math.ceil(needMs / DAY_MS)}`,
          },
        ]
      : [],
  );
}

/** Windows fetched side by side beyond the API's connections only wait for one. */
function concurrency(ctx: ConfigCheckContext): Finding {
  const c = ctx.config;
  const problems = [
    ["SESSIONHOUSE_WINDOW_CONCURRENCY", c.sessions.windowConcurrency],
    ["SESSIONHOUSE_AGG_WINDOW_CONCURRENCY", c.aggregations.windowConcurrency],
  ]
    .filter(([, n]) => Number(n) > c.api.connections)
    .map(([name, n]) => ({
      found: `${name} is ${n}, more than the ${c.api.connections} API connections (SESSIONHOUSE_API_CONNECTIONS): the windows beyond them wait`,
      fix: `raise SESSIONHOUSE_API_CONNECTIONS to ${n} or lower ${name}`,
    }));
  return findingOf(
    problems,
    `${c.sessions.windowConcurrency} session and ${c.aggregations.windowConcurrency} aggregation windows at once over ${c.api.connections} API connections`,
  );
}

/** Secrets short enough to guess (named by setting and length: never a character of them). */
function secrets(ctx: ConfigCheckContext): Finding {
  const short = shortSecrets(ctx.config).map(({ setting, length }) => ({
    found: `${setting} is ${length} characters long`,
    fix: `use a secret of ${RECOMMENDED_SECRET_LENGTH} characters or more for ${setting}`,
  }));
  return findingOf(
    short,
    `every secret is ${RECOMMENDED_SECRET_LENGTH} characters or longer`,
  );
}

/** SESSIONHOUSE_* variables nothing reads: a misspelt one leaves its setting at the default. */
function environment(ctx: ConfigCheckContext): Finding {
  const unknown = unknownEnvironmentVariables(ctx.env).map(
    ({ name, nearest }) => ({
      found: unknownVariableProblem({ name, nearest }),
      fix:
        nearest === undefined
          ? `unset ${name}`
          : `rename ${name} to ${nearest}, or unset it`,
    }),
  );
  return findingOf(
    unknown,
    "every SESSIONHOUSE_* variable set is one the configuration reads",
  );
}

const LOOPBACK = /^(localhost|127(\.\d+){3}|\[::1\])$/i;

/** An API key sent in clear beyond this host. */
function apiUrl(ctx: ConfigCheckContext): Finding {
  if (apiNotConfigured(ctx.config))
    return warn(
      "SESSIONHOUSE_API_URL or SESSIONHOUSE_API_KEY is not set",
      "set both (or api.url and api.apiKey in the config file) before sync, run or doctor without --offline",
    );
  const url = new URL(ctx.config.api.url);
  if (url.protocol === "http:" && !LOOPBACK.test(url.hostname))
    return warn(
      `SESSIONHOUSE_API_URL is http:// to ${url.host}: the API key travels unencrypted`,
      "use the https:// URL of the control plane",
    );
  return ok(`SESSIONHOUSE_API_URL ${url.origin}`);
}

export const CONFIG_CHECKS = familySpecs<ConfigCheckContext>("config", true, [
  ["schedules", schedules],
  ["retention", retention],
  ["concurrency", concurrency],
  ["secrets", secrets],
  ["api url", apiUrl],
  ["environment", environment],
]);
