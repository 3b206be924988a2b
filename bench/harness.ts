// What every part of `npm run bench` shares: the fixed clock, the simulator in its own process,
// scenarios each in a process of their own (their peak RSS is their own), and number formatting.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { planWindows } from "../src/sources/windows.js";
import type { ScenarioArgs } from "./scenario.js";

export const ROOT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
);
const CLI = join(ROOT, "bin", "sessionhouse.js");
const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), "scenario.js");
export const API_KEY = "bench-key-5d1f2a";
export const DAY = 86_400_000;
/** Runs of each measured part whose targets are judged on medians (BENCH_RUNS, default 3). */
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
/** The simulators' fixed clock: everything below is history, identical on every run. */
const CLOCK = "2026-11-16T00:00:00Z";
export const END_MS = Date.parse(CLOCK);
export interface Sim {
  url: string;
  child: ChildProcess;
}

const simulators = new Set<ChildProcess>();
// A failed scenario must not leave a simulator behind.
process.on("exit", () => {
  for (const child of simulators) child.kill("SIGKILL");
});

/** CPU seconds a child process has used so far (Linux; 0 elsewhere). */
export function cpuSeconds(child: ChildProcess): number {
  return child.pid === undefined ? 0 : pidCpuSeconds(child.pid);
}

/** The CPU seconds (user and system) the process `pid` has used so far; 0 when it is gone. */
export function pidCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A simulator in a process of its own; its clock the bench's fixed one unless given (`real`). */
export async function startSimulator(
  args: string[],
  clock = `fixed:${CLOCK}`,
): Promise<Sim> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      "simulate",
      "--port",
      "0",
      "--api-key",
      API_KEY,
      "--clock",
      clock,
      ...args,
    ],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolveUrl(m[1]);
    });
    child.on("exit", (code) =>
      reject(new Error(`simulator exited with ${code}`)),
    );
  });
  return { url, child };
}

export function stop(sim: Sim): Promise<void> {
  return new Promise((done) => {
    sim.child.on("exit", () => done());
    sim.child.kill("SIGTERM");
  });
}

/**
 * Pages through a range once, window by window as the exporter will (its windows are aligned
 * to multiples of the window length, so a range is usually cut in two), so that the simulator
 * in benchmark mode holds every page the measured run asks for pre-built.
 */
export async function warm(
  url: string,
  fromMs: number,
  toMs: number,
  limit: number,
): Promise<void> {
  for (const w of planWindows(fromMs, toMs, toMs - fromMs))
    await warmWindow(url, w.startMs, w.endMs, limit);
}

/** One ListSessionsV2 request to the simulator at `url`: sessions started in [fromMs, toMs). */
export function listSessionsPage(
  url: string,
  page: {
    fromMs: number;
    toMs: number;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<Response> {
  return fetch(`${url}/core.v1.SessionsService/ListSessionsV2`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": API_KEY },
    body: JSON.stringify({
      limit: page.limit,
      startTimestamp: String(Math.floor(page.fromMs / 1000)),
      endTimestamp: String(Math.floor(page.toMs / 1000)),
      ...(page.cursor ? { cursor: page.cursor } : {}),
    }),
  });
}

async function warmWindow(
  url: string,
  fromMs: number,
  toMs: number,
  limit: number,
): Promise<void> {
  let cursor: string | undefined;
  for (;;) {
    const res = await listSessionsPage(url, { fromMs, toMs, limit, cursor });
    const text = await res.text();
    cursor = /"nextCursor":"([^"]+)"/.exec(text.slice(-2000))?.[1];
    if (!cursor) return;
  }
}

export async function scenario<T>(args: ScenarioArgs): Promise<T> {
  const child = spawn(process.execPath, [SCENARIO, JSON.stringify(args)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, SESSIONHOUSE_REPO_ROOT: ROOT },
  });
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((done) =>
    child.on("exit", done),
  );
  if (code !== 0)
    throw new Error(`scenario ${args.kind} failed with exit code ${code}`);
  const last = out.trim().split("\n").pop() ?? "{}";
  return JSON.parse(last) as T;
}

export interface SessionsResult {
  rows: number;
  stored: number;
  ms: number;
  bytes: number;
  rssMB: number;
  /** CPU the scenario's process used during the sync (the exporter, and an embedded engine). */
  cpuMs: number;
  /** CPU seconds the server's process used during the sync (with `serverPid`). */
  serverCpuS?: number;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });

let runDir: string | undefined;

/**
 * The directory of this bench run, for everything it writes: unique (mkdtemp), so that two
 * benches at once never share one, and removed when the run ends (removeRunDir).
 */
export function benchDir(): string {
  runDir ??= mkdtempSync(join(tmpdir(), "sessionhouse-bench-"));
  return runDir;
}

/** Removes the directory of this bench run and everything in it. */
export function removeRunDir(): void {
  if (runDir !== undefined) rmSync(runDir, { recursive: true, force: true });
  runDir = undefined;
}

/** The data directory of a scenario, in the directory of this bench run. */
export const dataDir = (name: string) => join(benchDir(), name);

/** The median of measurements (of three runs, the middle one). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * The nearest-rank percentile `p` (0 < p ≤ 1) of measurements sorted ascending: the smallest
 * value at least a share p of them do not exceed (of five runs, p50 the third, p95 the fifth).
 */
export function percentile(sorted: readonly number[], p: number): number {
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(rank, 1)) - 1] ?? NaN;
}

export const verdict = (ok: boolean) => (ok ? "met" : "NOT met");

export interface Timed {
  seconds: number;
  /** CPU seconds, user and system: what a loaded machine's wait does not inflate. */
  cpuSeconds: number;
  rssMiB: number;
  ok: boolean;
  /** The command's last line of stderr when it failed. */
  error: string;
  stdout: string;
}

/** Runs the CLI under /usr/bin/time; a command that fails is reported, not thrown. */
export function cli(
  args: string[],
  env: Record<string, string>,
): Promise<Timed> {
  return new Promise((done) => {
    const child = spawn(
      "/usr/bin/time",
      [
        "-f",
        "TIME %e %M %U %S",
        "nice",
        "-n",
        "10",
        process.execPath,
        join(ROOT, "bin", "sessionhouse.js"),
        ...args,
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...env },
      },
    );
    let err = "";
    let out = "";
    child.stdout.on(
      "data",
      (c: Buffer) => (out = (out + c.toString()).slice(-4000)),
    );
    child.stderr.on(
      "data",
      (c: Buffer) => (err = (err + c.toString()).slice(-4000)),
    );
    child.on("exit", (code) => {
      const m = /TIME ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(err);
      const lines = err
        .split("\n")
        .filter((l) => l && !/^(TIME|Command exited|\s+at )/.test(l));
      done({
        seconds: Number(m?.[1] ?? NaN),
        cpuSeconds: Number(m?.[3] ?? NaN) + Number(m?.[4] ?? NaN),
        rssMiB: Math.round(Number(m?.[2] ?? NaN) / 1024),
        ok: code === 0,
        error: code === 0 ? "" : (lines.pop() ?? `exit ${code}`),
        stdout: out,
      });
    });
  });
}
