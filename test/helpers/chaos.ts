// The chaos runs' kill loop (test/slow/chaos/): the real CLI started again and again, each life
// SIGKILLed at a seeded moment until a run completes, and where each kill fell.
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testTmpDir } from "./run-tmp.js";
import {
  startCli,
  type CliPackage,
  type CliResult,
  type CliRun,
} from "./cli.js";

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
