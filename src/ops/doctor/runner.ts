// `sessionhouse doctor`: every check family's specs in one list, run in order (the data
// directory before the engine opens it, ClickHouse before the API, reports last), each failure
// caught as that check's result, every text scrubbed of the configuration's secrets. `run`
// performs the fast subset at start (no API quota, no browser).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { secretsOf, type Config } from "../../config/index.js";
import { scrubber, type Logger } from "../../util/logger.js";
import { openProbe, type ClickHouseProbe } from "../../warehouse/index.js";
import { apiChecks, ApiProbe } from "./api-checks.js";
import {
  findingOfError,
  Skip,
  type CheckResult,
  type CheckSpec,
  type CheckStatus,
} from "./check.js";
import { CLICKHOUSE_CHECKS } from "./clickhouse-checks.js";
import { CONFIG_CHECKS } from "./config-checks.js";
import { DATA_DIR_CHECKS } from "./data-dir-checks.js";
import { REPORT_CHECKS } from "./report-checks.js";

interface DoctorContext {
  config: Config;
  nowMs: number;
  env: Readonly<Record<string, string | undefined>>;
  api: ApiProbe;
  clickhouse(): Promise<ClickHouseProbe>;
}

/** Every check of a configuration, in the order they run. */
function doctorChecks(config: Config): CheckSpec<DoctorContext>[] {
  return [
    ...CONFIG_CHECKS,
    ...DATA_DIR_CHECKS,
    ...CLICKHOUSE_CHECKS,
    ...apiChecks(config),
    ...REPORT_CHECKS,
  ];
}

interface DoctorOptions {
  /** Only the checks `run` performs at start. */
  fast?: boolean;
  /** Only the configuration's own checks: nothing is opened, nothing is asked over the network. */
  offline?: boolean;
  nowMs?: number;
  /** The environment the configuration was read from (default this process's). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Runs the checks; a check's failure is its result, never a throw. */
export async function runDoctor(
  config: Config,
  options: DoctorOptions = {},
): Promise<CheckResult[]> {
  const nowMs = options.nowMs ?? Date.now();
  let opened: Promise<ClickHouseProbe> | undefined;
  const ctx: DoctorContext = {
    config,
    nowMs,
    env: options.env ?? process.env,
    api: new ApiProbe(config, nowMs),
    clickhouse: () => {
      opened ??= openClickHouse(config);
      return opened;
    },
  };
  const scrub = scrubber(secretsOf(config));
  const results: CheckResult[] = [];
  try {
    for (const spec of doctorChecks(config)) {
      if (options.fast && !spec.fast) continue;
      if (options.offline && spec.family !== "config") continue;
      let finding;
      try {
        finding = await spec.run(ctx);
      } catch (err) {
        finding = findingOfError(err);
      }
      results.push({
        name: spec.name,
        family: spec.family,
        status: finding.status,
        found: scrub(finding.found),
        ...(finding.fix === undefined ? {} : { fix: scrub(finding.fix) }),
      });
    }
  } finally {
    await ctx.api.close();
    if (opened) await opened.then((p) => p.close()).catch(() => undefined);
  }
  return results;
}

/** The probe; a Skip when the embedded data directory is not made yet (nothing to open). */
async function openClickHouse(config: Config): Promise<ClickHouseProbe> {
  const ch = config.clickhouse;
  if (!ch.url && !existsSync(resolve(ch.dataDir)))
    throw new Skip(
      `the data directory ${resolve(ch.dataDir)} does not exist yet: migrate or run creates it`,
    );
  return openProbe(config);
}

/** The worst status of the results: fail, then warn, else ok. */
export function overallStatus(results: readonly CheckResult[]): CheckStatus {
  if (results.some((r) => r.status === "fail")) return "fail";
  if (results.some((r) => r.status === "warn")) return "warn";
  return "ok";
}

/** One line per check: status, family and name, what was found, and what to do when not ok. */
export function formatResult(r: CheckResult): string {
  const head = `${r.status.padEnd(7)} ${r.family} ${r.name}: ${r.found}`;
  return r.fix === undefined || r.status === "ok" || r.status === "skipped"
    ? head
    : `${head} — fix: ${r.fix}`;
}

/** The results as log lines: a warning as warn, a failure as error, the rest as info. */
export function logResults(
  logger: Logger,
  results: readonly CheckResult[],
): void {
  for (const r of results) {
    const fields = {
      check: `${r.family} ${r.name}`,
      status: r.status,
      found: r.found,
      ...(r.fix === undefined ? {} : { fix: r.fix }),
    };
    if (r.status === "fail") logger.error(fields, "preflight check failed");
    else if (r.status === "warn") logger.warn(fields, "preflight check warns");
    else logger.info(fields, "preflight check");
  }
}
