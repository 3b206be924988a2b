// A service started by npm (`npx sessionhouse run`, the README's start) stops when npm ends:
// npm ends on SIGTERM without passing the signal on, and the service would otherwise go on as an
// orphan holding the data directory. Started otherwise (systemd, a container, nohup), the end of
// its parent does not stop it. The parent here is a shell that starts `run` and is then killed.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Simulator } from "../../../src/simulator/index.js";
import { cleanEnv, NEVER, ROOT } from "../../helpers/cli.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { API_KEY, testSimulator } from "../../helpers/simulator.js";

const BIN = join(ROOT, "bin", "sessionhouse.js");
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
 * pid, the shell and the file of its output, once the service logs that it serves.
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
  const log = join(testTmpDir(), `npm-parent-${npm ? "npm" : "other"}.log`);
  // The shell prints the service's pid, then waits for it, as npm does.
  const shell = spawn(
    "sh",
    ["-c", `"${process.execPath}" "${BIN}" run > "$LOG" 2>&1 & echo $!; wait`],
    {
      env: { ...env, LOG: log },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const pid = await new Promise<number>((resolve) =>
    createInterface({ input: shell.stdout }).once("line", (l) =>
      resolve(Number(l)),
    ),
  );
  started.push(pid);
  // Serving (the engine opened, migrated, the ops server listening) before its parent goes.
  const output = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
  expect(
    await until(
      () => output().includes('"msg":"service started"') || !alive(pid),
      60_000,
    ),
  ).toBe(true);
  expect(alive(pid), output()).toBe(true);
  return { pid, shell, output };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

const NPM_ENDED = "npm, which started this service, has ended";

// The two cases run side by side: each has its own data directory and processes.
describe.concurrent("the service and the process that started it", () => {
  it("started by npm, stops when npm is killed", async () => {
    const { pid, shell, output } = await startUnderShell(true);
    shell.kill("SIGKILL");
    expect(await until(() => !alive(pid), 45_000)).toBe(true);
    expect(output()).toContain(NPM_ENDED);
  });

  it("started otherwise, goes on when its parent ends", async () => {
    const { pid, shell, output } = await startUnderShell(false);
    shell.kill("SIGKILL");
    // Three times as long as a service started by npm takes to notice (it looks every second).
    expect(await until(() => !alive(pid), 3_000)).toBe(false);
    expect(output()).not.toContain(NPM_ENDED);
    process.kill(pid, "SIGTERM");
    expect(await until(() => !alive(pid), 45_000)).toBe(true);
  });
});
