// The real CLI as a child process, for tests that need exit codes, stderr and SIGKILL. Each
// test file runs a private copy of the package that the run built once (built-dist.ts, the
// globalSetup): a child's working directory, files and migrations stay its own, and a rebuild
// of dist/ by another run never changes the code under a child that is starting up.
import { spawn, type ChildProcess } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { DIST } from "./built-dist.js";
import { testTmpDir } from "./run-tmp.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A cron schedule that ticks once a year (midnight, 1 January): a job of `run` that must not
 * tick during a test. A job that never succeeded still runs once at the start.
 */
export const NEVER = "0 0 0 1 1 *";

export interface CliPackage {
  /** Root of the private copy: bin/, dist/, migrations/, package.json, node_modules → ours. */
  root: string;
  bin: string;
  migrations: string;
}

/** A private copy of the package built for this run (dist/ as the globalSetup left it). */
export async function buildCli(): Promise<CliPackage> {
  if (!existsSync(join(DIST, "cli")))
    throw new Error(
      `no build in ${DIST}: run the test through vitest.config.ts (its globalSetup builds it) or npm run build first`,
    );
  const root = mkdtempSync(join(testTmpDir(), "sessionhouse-cli-"));
  await cp(DIST, join(root, "dist"), { recursive: true });
  mkdirSync(join(root, "bin"));
  cpSync(
    join(ROOT, "bin", "sessionhouse.js"),
    join(root, "bin", "sessionhouse.js"),
  );
  cpSync(join(ROOT, "migrations"), join(root, "migrations"), {
    recursive: true,
  });
  cpSync(join(ROOT, "detections"), join(root, "detections"), {
    recursive: true,
  });
  cpSync(join(ROOT, "package.json"), join(root, "package.json"));
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return {
    root,
    bin: join(root, "bin", "sessionhouse.js"),
    migrations: join(root, "migrations"),
  };
}

/** Removes a private copy (its node_modules is a link: the link goes, not what it points to). */
export function removeCli(pkg: CliPackage | undefined): void {
  if (pkg) rmSync(pkg.root, { recursive: true, force: true });
}

/** Another private copy of an already compiled package (to edit its migrations, say). */
export function copyCli(from: CliPackage): CliPackage {
  const root = mkdtempSync(join(testTmpDir(), "sessionhouse-cli-"));
  for (const part of [
    "bin",
    "dist",
    "migrations",
    "detections",
    "package.json",
  ])
    cpSync(join(from.root, part), join(root, part), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"), "dir");
  return {
    root,
    bin: join(root, "bin", "sessionhouse.js"),
    migrations: join(root, "migrations"),
  };
}

/** The environment of this process without any exporter setting: each test says its own. */
export function cleanEnv(
  extra: Record<string, string | undefined> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (
      k.startsWith("SESSIONHOUSE_") ||
      k.startsWith("CLICKHOUSE_") ||
      k.startsWith("SIMULATOR_") ||
      k === "NODE_OPTIONS"
    )
      continue;
    env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout lines that are JSON log lines, parsed. */
  logs: Record<string, unknown>[];
}

export interface CliRun {
  child: ChildProcess;
  /** The JSON log lines so far, growing while the child runs. */
  logs: Record<string, unknown>[];
  result: Promise<CliResult>;
}

export function startCli(
  cli: CliPackage,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): CliRun {
  const child = spawn(process.execPath, [cli.bin, ...args], {
    cwd: cli.root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const logs: Record<string, unknown>[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    stdout += `${line}\n`;
    if (line.startsWith("{")) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // A line that only looks like JSON stays in stdout.
      }
    }
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString("utf8");
  });
  const result = new Promise<CliResult>((resolve) => {
    // "close", not "exit": the output streams are complete then.
    child.once("close", (code, signal) =>
      resolve({ code, signal, stdout, stderr, logs }),
    );
  });
  return { child, logs, result };
}

export async function runCli(
  cli: CliPackage,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<CliResult> {
  const run = startCli(cli, args, env);
  const timer = setTimeout(() => run.child.kill("SIGKILL"), timeoutMs);
  try {
    return await run.result;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A private copy of the package for the test file that calls this at its top level: built
 * before its tests, removed after them. Returns the copy's getter.
 */
export function privateCli(): () => CliPackage {
  let cli: CliPackage | undefined;
  beforeAll(async () => {
    cli = await buildCli();
  }, 120_000);
  afterAll(() => {
    removeCli(cli);
  });
  return () => {
    if (!cli) throw new Error("privateCli: the package is built in beforeAll");
    return cli;
  };
}
