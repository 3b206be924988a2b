// `sessionhouse detect …`: detections as code (docs/detections.md). `test` runs every rule's
// fixtures on an embedded engine of its own; `run` hunts with one rule over the sessions that
// started in a range of the configured warehouse (nothing recorded); `compile` writes the Grafana
// alert rules of every rule.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Config } from "../../config/index.js";
import { runFixture, type FixtureOutcome } from "../../detections/fixtures.js";
import {
  compileAlertRules,
  ALERT_RULES_FILE,
} from "../../detections/grafana.js";
import { checkRules, findHits } from "../../detections/query.js";
import { historicalAfterMs } from "../../detections/history.js";
import {
  DetectionRuleError,
  loadRules,
  ruleDirs,
  RuleNotAReadError,
  type Rule,
} from "../../detections/rule.js";
import { withRun } from "../../pipeline/context.js";
import { tableCsv } from "../../reports/csv.js";
import { FatalError, UsageError } from "../../util/errors.js";
import { noSuchName } from "../../util/nearest.js";
import { makePrivateDir, writePrivateFile } from "../../util/private-files.js";
import { parseInstant } from "../../util/time.js";
import type { DetectionHit } from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { printTable } from "../output.js";
import { configFrom, openRuntime, type GlobalOptions } from "../runtime.js";
import { counted } from "../output.js";

interface RunFlags {
  rule: string;
  from: string;
  to: string;
  format: string;
  out?: string;
}

/**
 * `fn`, a rule it refuses (an error of class `refused`) being refused input (exit 2): a file
 * that does not fit the rule format, a Sigma rule that cannot be read, SQL that is not a read.
 */
async function refusingRules<T>(
  fn: () => T | Promise<T>,
  refused: typeof DetectionRuleError = DetectionRuleError,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof refused)) throw err;
    throw new UsageError(err.message, {
      cause: err,
      ...(err.hint === undefined ? {} : { hint: err.hint }),
    });
  }
}

function rulesOf(config: Config, dir: string | undefined): Promise<Rule[]> {
  return refusingRules(() =>
    loadRules(
      dir === undefined ? ruleDirs(config.detections.dir) : [resolve(dir)],
    ),
  );
}

export async function runDetectTest(
  globals: GlobalOptions,
  o: { dir?: string },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const rules = await rulesOf(config, o.dir);
  const scratch = mkdtempSync(join(tmpdir(), "sessionhouse-detect-"));
  // The fixtures run on an embedded engine in a directory of their own, never on the warehouse.
  const own: Config = {
    ...config,
    clickhouse: {
      ...config.clickhouse,
      url: undefined,
      dataDir: scratch,
      database: "detect_test",
      cluster: undefined,
      replicated: false,
      distributed: false,
    },
    log: { ...config.log, level: "silent" },
  };
  const outcomes: FixtureOutcome[] = [];
  try {
    const rt = await openRuntime(own);
    try {
      // Every rule's SQL is one read, or none of the fixtures runs.
      await refusingRules(() => checkRules(rt.warehouse, rules, "arrived"));
      // The engine refuses what only reading the SQL let through (file(), url()): refused too.
      await refusingRules(
        () =>
          withRun(rt, "detect.test", async (ctx) => {
            for (const rule of rules)
              for (let i = 0; i < rule.fixtures.length; i++) {
                const outcome = await runFixture(ctx, rule, i);
                outcomes.push(outcome);
                process.stdout.write(`${describeOutcome(outcome)}\n`);
              }
          }),
        RuleNotAReadError,
      );
    } finally {
      await rt.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const failed = outcomes.filter((x) => !x.passed);
  process.stdout.write(
    `${rules.length} rules, ${outcomes.length} fixtures, ${failed.length} failed\n`,
  );
  if (failed.length > 0)
    throw new FatalError(
      "DETECTION_TEST_FAILED",
      `${failed.length} fixture${failed.length === 1 ? "" : "s"} failed: ${failed.map((x) => `${x.rule.id} / ${x.fixture.name}`).join(", ")}`,
      {
        hint: "each FAIL line names the rule's file and the fixture's line",
      },
    );
}

function describeOutcome(x: FixtureOutcome): string {
  const where = `${x.rule.id} (${x.rule.file}:${x.line}): ${x.fixture.name}`;
  if (x.passed) return `ok   ${where}`;
  if (x.again > 0)
    return `FAIL ${where}: a second evaluation of the same window fired ${counted(x.again, "more time")}`;
  return x.fixture.fires
    ? `FAIL ${where}: must fire, no hit`
    : `FAIL ${where}: must not fire, ${counted(x.hits, "hit")}`;
}

export async function runHunt(
  globals: GlobalOptions,
  o: RunFlags,
): Promise<void> {
  if (!["table", "csv", "json"].includes(o.format))
    throw new UsageError(
      `--format ${o.format} is not one of table, csv, json`,
      { hint: "use --format csv or --format json" },
    );
  const nowMs = Date.now();
  const fromMs = parseInstant(o.from, "--from", nowMs);
  const toMs = parseInstant(o.to, "--to", nowMs);
  if (toMs <= fromMs)
    throw new UsageError("--to must be after --from", {
      hint: "give a range that ends after it starts",
    });
  const config = configFrom(globals, {}, { needsApi: false });
  const rules = await rulesOf(config, undefined);
  const rule = rules.find((r) => r.id === o.rule);
  if (rule === undefined)
    throw noSuchName(
      ["rule", "rules"],
      o.rule,
      rules.map((r) => r.id),
      "the rules are the files of detections/ and of detections.dir (SESSIONHOUSE_DETECTIONS_DIR)",
    );
  const hits = await withWarehouse(config, "read", async (w) => {
    await refusingRules(() => checkRules(w, [rule], "started"));
    return refusingRules(
      () =>
        findHits(
          w,
          rule,
          { fromMs, toMs, scope: "started" },
          { nowMs, historicalAfterMs: historicalAfterMs(config) },
        ),
      RuleNotAReadError,
    );
  });
  const text = formatHits(hits, o.format);
  if (o.out === undefined) process.stdout.write(text);
  else
    writePrivateFile(resolve(o.out), text, {
      groupReadable: config.files.groupReadable,
    });
  if (o.out !== undefined)
    process.stdout.write(
      `${hits.length} hits of ${rule.id} written to ${resolve(o.out)}\n`,
    );
}

/** The columns of every hit, first in each row (then the rule's own fields). */
const HIT_COLUMNS = [
  "rule",
  "hit_key",
  "session_id",
  "event_time",
  "arrived_at",
  "actor",
  "historical",
  "pages",
] as const;

function hitRow(h: DetectionHit): Record<string, string> {
  return {
    rule: h.ruleId,
    hit_key: h.hitKey,
    session_id: h.sessionId,
    event_time: new Date(h.eventTimeMs).toISOString(),
    arrived_at: new Date(h.arrivedAtMs).toISOString(),
    actor: h.actor,
    historical: String(h.historical),
    pages: String(h.pages),
    ...h.fields,
  };
}

function formatHits(hits: readonly DetectionHit[], format: string): string {
  if (format === "json")
    return `${JSON.stringify(
      hits.map((h) => ({ ...hitRow(h), session_ids: h.sessionIds })),
      null,
      2,
    )}\n`;
  const rows = hits.map(hitRow);
  if (format === "csv") {
    // The header is written with no hit too: a program reading the file finds its columns.
    const keys = [
      ...new Set([...HIT_COLUMNS, ...rows.flatMap((r) => Object.keys(r))]),
    ];
    return tableCsv({
      columns: keys.map((key) => ({ key, label: key, kind: "text" })),
      rows,
    });
  }
  let out = "";
  printTable(rows, {
    write: (s: string) => ((out += s), true),
  } as unknown as NodeJS.WritableStream);
  return out;
}

export async function runDetectCompile(
  globals: GlobalOptions,
  o: { out?: string },
): Promise<void> {
  const config = configFrom(globals, {}, { needsApi: false });
  const text = compileAlertRules(await rulesOf(config, undefined));
  if (o.out === undefined) {
    process.stdout.write(text);
    return;
  }
  // As every file the exporter writes: the directory 0700 when it makes it, the file 0600
  // (0750/0640 with files.groupReadable, for a Grafana of the owner's group to read).
  const dir = resolve(o.out);
  const sharing = { groupReadable: config.files.groupReadable };
  makePrivateDir(dir, sharing);
  writePrivateFile(join(dir, ALERT_RULES_FILE), text, sharing);
  process.stdout.write(
    `alert rules written to ${join(dir, ALERT_RULES_FILE)}\n`,
  );
}
