// The chaos runs' kill loop (test/slow/chaos/): the real CLI started again and again, each life
// SIGKILLed at a seeded moment until a run completes, and where each kill fell.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import type { AggregationJobConfig } from "../../src/config/index.js";
import type { Simulator } from "../../src/simulator/index.js";
import { planWindows } from "../../src/sources/windows.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import { testTmpDir } from "./run-tmp.js";
import {
  cleanEnv,
  startCli,
  type CliPackage,
  type CliResult,
  type CliRun,
} from "./cli.js";
import {
  apiAggregationWindow,
  mapDifferences,
  storedAggregationWindows,
} from "./expected.js";
import { API_KEY } from "./simulator.js";
import { testDataDir } from "./warehouse.js";

/** mulberry32: a tiny seeded PRNG, so the kill schedule is the same on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A whole number of at least `min` from the environment, or `fallback` when unset. */
export function envCount(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name}=${raw}: expected a whole number >= ${min}`);
  return n;
}

/**
 * A configuration file for the chaos runs' CLI: the API's retries as many as by default, their
 * waits short (20 ms doubling, at most 1 s, instead of 500 ms doubling to 30 s). An answer broken
 * on purpose is refused after the same 7 tries either way; the default waits spent about 15 s
 * on each such request. A 429 still waits for the rate-limit reset it announces.
 */
export function fastRetriesConfig(): string {
  const file = join(
    mkdtempSync(join(testTmpDir(), "sessionhouse-chaos-")),
    "config.yaml",
  );
  writeFileSync(file, "api:\n  retryBaseMs: 20ms\n  retryMaxMs: 1s\n", {
    mode: 0o600,
  });
  return file;
}

export interface KillPlan {
  maxKills: number;
  /** A life not in `first` is killed this long after it started, drawn in [minMs, maxMs). */
  minMs: number;
  maxMs: number;
  /**
   * The first lives are killed at a moment their logs show instead: life i as soon as it has
   * logged the message `first[i]` (within a further [0, minMs)).
   */
  first?: readonly string[];
}

export interface PhaseReport {
  lives: number;
  kills: number;
  /** Kills of a life that had not logged "run started": the engine starting or migrating. */
  killsBeforeRun: number;
  /** Kills of a life inside its run: a run row left open. */
  killsInRun: number;
  failures: string[];
}

/** SIGKILLs the child `delayMs` after it logged `msg` (after its start when undefined). */
function killWhen(run: CliRun, msg: string | undefined, delayMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => run.child.kill("SIGKILL"), delayMs);
  };
  let poll: NodeJS.Timeout | undefined;
  if (msg === undefined) arm();
  else
    poll = setInterval(() => {
      if (!run.logs.some((l) => l.msg === msg)) return;
      clearInterval(poll);
      arm();
    }, 10);
  return () => {
    clearInterval(poll);
    clearTimeout(timer);
  };
}

/**
 * Runs the command until `done` says so after a run that exited 0: the first `maxKills` lives
 * are SIGKILLed as `kill` says unless they finish first. A run may fail under faults (its budget
 * spent, a window not settled yet); failing more than `maxFailures` times is a bug. Every
 * result is pushed to `outputs`.
 */
export async function untilComplete(
  cli: CliPackage,
  outputs: CliResult[],
  args: string[],
  env: NodeJS.ProcessEnv,
  random: () => number,
  kill: KillPlan,
  options: { maxFailures?: number; done?: () => Promise<boolean> } = {},
): Promise<PhaseReport> {
  const report: PhaseReport = {
    lives: 0,
    kills: 0,
    killsBeforeRun: 0,
    killsInRun: 0,
    failures: [],
  };
  for (;;) {
    const life = report.lives++;
    const run = startCli(cli, args, env);
    const after = kill.first?.[life];
    const delay =
      after === undefined
        ? kill.minMs + random() * (kill.maxMs - kill.minMs)
        : random() * kill.minMs;
    const stop =
      report.kills < kill.maxKills ? killWhen(run, after, delay) : undefined;
    const r = await run.result;
    stop?.();
    outputs.push(r);
    if (r.signal === "SIGKILL") {
      report.kills++;
      if (r.logs.some((l) => l.msg === "run started")) report.killsInRun++;
      else report.killsBeforeRun++;
      continue;
    }
    if (r.code === 0 && (options.done === undefined || (await options.done())))
      return report;
    if (r.code !== 0)
      report.failures.push(
        `exit ${String(r.code)}: ${r.stderr.trim().split("\n").slice(0, 3).join(" | ")}`,
      );
    if (report.failures.length > (options.maxFailures ?? 3))
      throw new Error(
        `${args.join(" ")} keeps failing:\n${report.failures.join("\n")}`,
      );
    if (report.lives > 40) throw new Error(`${args.join(" ")} never completes`);
  }
}

/** What every phase of one chaos run shares: the CLI, its settings, the kill moments' PRNG. */
export interface ChaosRun {
  cli: CliPackage;
  /** Every life's result, in order. */
  outputs: CliResult[];
  configFile: string;
  env: NodeJS.ProcessEnv;
  random: () => number;
}

/** The environment of a chaos run's CLI against `sim`, `extra` added (info logs as JSON). */
export function chaosEnv(
  sim: Simulator,
  database: string,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: testDataDir(),
    CLICKHOUSE_DATABASE: database,
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    SESSIONHOUSE_PAGE_SIZE: "500",
    SESSIONHOUSE_WINDOW: "6h",
    SESSIONHOUSE_MAX_RPS: "100",
    SESSIONHOUSE_REQUEST_TIMEOUT: "15s",
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
    ...extra,
  });
}

const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19) + "Z";

/** Kills of the aggregations phase: five eighths of the sessions phase's, at least 2. */
function aggregationRounds(rounds: number): number {
  return Math.max(2, Math.round((rounds * 5) / 8));
}

/**
 * The sessions phase's kills: the first life of the fresh data directory between two
 * migrations, the second inside its run, the others 0.5 to 6 s after their start.
 */
export function sessionsKillPlan(rounds: number): KillPlan {
  return {
    maxKills: rounds,
    minMs: 500,
    maxMs: 6_000,
    first: ["migration applied", "run started"],
  };
}

/** The aggregations phase's kills: the first life inside its run, the others 0.5 to 4 s. */
export function aggregationsKillPlan(rounds: number): KillPlan {
  return {
    maxKills: aggregationRounds(rounds),
    minMs: 500,
    maxMs: 4_000,
    first: ["run started"],
  };
}

/** `sync <what> --from --to` over [fromMs, toMs), killed as `kill` says until it completes. */
export function killedSync(
  run: ChaosRun,
  what: "sessions" | "aggregations" | "reconcile",
  fromMs: number,
  toMs: number,
  kill: KillPlan,
  options: { maxFailures?: number; done?: () => Promise<boolean> } = {},
): Promise<PhaseReport> {
  const args = ["--config", run.configFile, "sync", what];
  args.push("--from", iso(fromMs), "--to", iso(toMs));
  return untilComplete(
    run.cli,
    run.outputs,
    args,
    run.env,
    run.random,
    kill,
    options,
  );
}

/** Every kill asked for fell, before a run and inside one, in both phases. */
export function expectKillsFell(
  sessions: PhaseReport,
  aggregations: PhaseReport,
  rounds: number,
): void {
  expect(sessions.kills).toBe(rounds);
  expect(aggregations.kills).toBe(aggregationRounds(rounds));
  expect(sessions.killsBeforeRun).toBeGreaterThan(0);
  expect(sessions.killsInRun).toBeGreaterThan(0);
  expect(aggregations.killsInRun).toBeGreaterThan(0);
}

/**
 * Every window of every job over [fromMs, toMs) as stored against what the fault-free twin
 * answers: histogram counts, top values and hit count, as readable lines (empty when equal). A
 * window `poisoned` says is broken must have nothing stored; `compared` counts the others.
 */
export async function aggregationDifferences(
  w: Warehouse,
  clean: Simulator,
  jobs: readonly AggregationJobConfig[],
  range: { fromMs: number; toMs: number },
  poisoned: (job: AggregationJobConfig, startMs: number) => boolean = () =>
    false,
): Promise<{ differences: string[]; compared: number }> {
  const differences: string[] = [];
  let compared = 0;
  for (const job of jobs) {
    const windows = planWindows(range.fromMs, range.toMs, job.windowMs);
    const stored = await storedAggregationWindows(w, job, windows);
    differences.push(...stored.unplanned);
    for (const win of windows) {
      const at = `${job.name}@${iso(win.startMs)}`;
      const got = stored.byStart.get(win.startMs);
      if (!got) continue;
      if (poisoned(job, win.startMs)) {
        if (got.numHits !== -1 || got.histogram.size > 0 || got.top.size > 0)
          differences.push(`${at}: poisoned but rows stored`);
        continue;
      }
      const want = await apiAggregationWindow(
        clean,
        job,
        win.startMs,
        win.endMs,
      );
      differences.push(
        ...mapDifferences(`${at} histogram`, got.histogram, want.histogram),
        ...mapDifferences(`${at} top`, got.top, want.top),
        ...(got.numHits === want.numHits
          ? []
          : [`${at} numHits: stored ${got.numHits}, API ${want.numHits}`]),
      );
      compared++;
    }
  }
  return { differences, compared };
}
