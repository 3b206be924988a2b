// A service started by npm (`npx sessionhouse run`, the README's start) stops when npm ends:
// npm ends on SIGTERM without passing the signal on, and the service would otherwise go on as an
// orphan holding the data directory. Started otherwise (systemd, a container, nohup), the end of
// its parent does not stop it. The parent here is a shell that starts `run` and is then killed.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import { cleanEnv, ROOT } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";

const BIN = join(ROOT, "bin", "sessionhouse.js");
const NEVER = "0 0 0 1 1 *";
let sim: Simulator;
const started: number[] = [];

beforeAll(async () => {
  sim = await testSimulator({ historyDays: 1, sessionsPerDay: 50 });
});

afterAll(async () => {
  for (const pid of started) if (alive(pid)) process.kill(pid, "SIGKILL");
  await sim?.close();
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * `run` started by a shell (with npm's variable when `npm` is set); resolves with the service's
 * pid and the shell, once the service logs that it serves.
 */
async function startUnderShell(npm: boolean) {
  const env = cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: mkdtempSync(join(testTmpDir(), "npm-parent-")),
    SESSIONHOUSE_LOG_FORMAT: "json",
    SESSIONHOUSE_OPS_PORT: "0",
    SESSIONHOUSE_SESSIONS_SCHEDULE: NEVER,
    SESSIONHOUSE_REFRESH_SCHEDULE: NEVER,
    SESSIONHOUSE_RECONCILE_SCHEDULE: NEVER,
  });
  // The tests themselves run under npm: its variable is inherited unless taken away.
  delete env.npm_command;
  if (npm) env.npm_command = "exec";
  // The shell prints the service's pid, then waits for it, as npm does.
  const shell = spawn(
    "sh",
    ["-c", `"${process.execPath}" "${BIN}" run > "$LOG" 2>&1 & echo $!; wait`],
    {
      env: { ...env, LOG: join(testTmpDir(), `npm-parent-${Date.now()}.log`) },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const pid = await new Promise<number>((resolve) =>
    createInterface({ input: shell.stdout }).once("line", (l) =>
      resolve(Number(l)),
    ),
  );
  started.push(pid);
  return { pid, shell };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

describe("the service and the process that started it", () => {
  it("started by npm, stops when npm is killed", async () => {
    const { pid, shell } = await startUnderShell(true);
    // Let it start serving (opening the engine, migrating) before its parent goes.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(alive(pid)).toBe(true);
    shell.kill("SIGKILL");
    expect(await until(() => !alive(pid), 45_000)).toBe(true);
  });

  it("started otherwise, goes on when its parent ends", async () => {
    const { pid, shell } = await startUnderShell(false);
    await new Promise((r) => setTimeout(r, 3_000));
    shell.kill("SIGKILL");
    // Longer than the npm case needs to notice and stop.
    expect(await until(() => !alive(pid), 6_000)).toBe(false);
    process.kill(pid, "SIGTERM");
    expect(await until(() => !alive(pid), 45_000)).toBe(true);
  });
});
