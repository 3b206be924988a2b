// Two `sessionhouse run` processes on one database (real child processes, a ClickHouse server:
// CLICKHOUSE_URL on the server pass, else the HTTP front over the embedded engine, started
// here). The first takes the service lease and syncs; the second waits as a standby (live, not
// ready, logs the holder) while `sync` is refused naming the holder. The holder is paused
// (SIGSTOP): the standby takes over once its claim expires; resumed, the old holder finds the
// lease lost and exits 1. A restarted process waits for the new holder, which is SIGKILLed: the
// restart takes over at once (its owner is provably gone) and stops with SIGTERM, releasing the
// lease. All along the checkpoints (as `checkpoints FINAL` shows them) never move back; at the
// end no table holds a duplicate row under FINAL and the sessions are the simulator's.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StatusReport } from "../../../src/cli/commands/status.js";
import type { Config } from "../../../src/config/index.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  NEVER,
  buildCli,
  cleanEnv,
  removeCli,
  ROOT,
  startCli,
  type CliPackage,
  type CliRun,
} from "../../helpers/cli.js";
import { parsePrometheusText, sampleValue } from "../../helpers/prom-text.js";
import {
  API_KEY,
  expectedSessions,
  testSimulator,
} from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import { mainInProcess } from "../../helpers/cli-in-process.js";
import {
  openWarehouse,
  readCheckpoint,
  type Warehouse,
} from "../../../src/warehouse/index.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

// The simulator's clock stands still at the real now: the history is the same for every run.
const SIM_NOW = Math.floor(Date.now() / 60_000) * 60_000;
const WAIT_MS = 120_000;

let sim: Simulator;
let cli: CliPackage;
let front: ChildProcess | undefined;
let config: Config;
let configFile: string;
let env: NodeJS.ProcessEnv;
const runs: CliRun[] = [];

/** The HTTP front over a fresh embedded engine (scripts/http-front.mjs), when no server is given. */
async function startFront(): Promise<string> {
  const child = spawn(process.execPath, ["scripts/http-front.mjs"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
    // Its engine directory goes with the test run's.
    env: {
      ...process.env,
      HTTP_FRONT_DATA_DIR: mkdtempSync(join(testTmpDir(), "front-")),
    },
  });
  front = child;
  const [line] = (await once(
    createInterface({ input: child.stdout }),
    "line",
  )) as [string];
  const url = /^CLICKHOUSE_URL=(\S+)$/.exec(line)?.[1];
  if (!url) throw new Error(`unexpected first line of the HTTP front: ${line}`);
  return url;
}

beforeAll(async () => {
  const [s, c, url] = await Promise.all([
    testSimulator({ atMs: SIM_NOW, historyDays: 2 }),
    buildCli(),
    process.env.CLICKHOUSE_URL ?? startFront(),
  ]);
  sim = s;
  cli = c;
  config = await testConfig({ CLICKHOUSE_URL: url });
  // The database as `migrate` leaves it (the run's schema replayed): the first process finds
  // nothing to migrate, as on a warehouse in use.
  await (await migratedWarehouse(config)).close();
  const dir = mkdtempSync(join(testTmpDir(), "sessionhouse-lease-"));
  configFile = join(dir, "run.yaml");
  writeFileSync(
    configFile,
    [
      "sessions:",
      '  schedule: "*/2 * * * * *"',
      `  refreshSchedule: "${NEVER}"`,
      `  reconcileSchedule: "${NEVER}"`,
      "  windowMs: 1h",
      "  pageSize: 500",
      "  lookbackMs: 1h",
      "  initialLookbackMs: 1d",
      "aggregations:",
      "  jobs: []",
      "streams:",
      "  enabled: false",
      "retention:",
      '  rollupSchedule: "*/5 * * * * *"',
      // Once a year: it runs at the first start (never succeeded), not at every minute, where
      // a run of several seconds held each shutdown until its deadline.
      "detections:",
      `  schedule: "${NEVER}"`,
      "service:",
      "  opsPort: 0",
      "  shutdownDeadlineMs: 3s",
      // A paused holder's claim lapses 6 s after its last renewal: the standby's wait.
      "  leaseTtlMs: 6s",
      "  leaseRenewMs: 1s",
      "",
    ].join("\n"),
  );
  env = cleanEnv({
    SESSIONHOUSE_API_URL: sim.url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: config.clickhouse.dataDir,
    CLICKHOUSE_DATABASE: config.clickhouse.database,
    CLICKHOUSE_URL: url,
    SESSIONHOUSE_LOG_LEVEL: "info",
    SESSIONHOUSE_LOG_FORMAT: "json",
  });
}, WAIT_MS);

afterAll(async () => {
  // A child left by a failed test must not outlive the test process.
  for (const r of runs)
    if (r.child.exitCode === null && r.child.signalCode === null)
      r.child.kill("SIGKILL");
  await sim?.close();
  if (front) {
    front.kill("SIGTERM");
    await once(front, "exit");
  }
  removeCli(cli);
}, WAIT_MS);

function startRun(): CliRun {
  const r = startCli(cli, ["--config", configFile, "run"], env);
  runs.push(r);
  return r;
}

type Line = Record<string, unknown>;
/** A log line matcher; `what` names it in a failure. */
type Match = ((l: Line) => boolean) & { what?: string };

/** The first log line of `r` that matches, polled until a generous deadline. */
async function line(r: CliRun, match: Match): Promise<Line> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const hit = r.logs.find(match);
    if (hit) return hit;
    if (Date.now() > deadline)
      throw new Error(
        `no log line ${match.what ?? "that matches"} of pid ${String(r.child.pid)}; its last ones: ${JSON.stringify(r.logs.slice(-8))}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const msg = (text: string): Match =>
  Object.assign((l: Line) => l.msg === text, { what: JSON.stringify(text) });
const GONE =
  "service lease holder is gone: its claim is released before it expires";
const holderPid = (l: Line) => (l.holder as { pid?: number } | undefined)?.pid;

/** A sessions run that finished after the line matching `after`. */
async function sessionsRunAfter(r: CliRun, after: Match) {
  await line(r, after);
  const from = r.logs.findIndex(after);
  const deadline = Date.now() + WAIT_MS;
  while (
    !r.logs
      .slice(from)
      .some((l) => l.msg === "run finished" && l.job === "sessions")
  ) {
    if (Date.now() > deadline) throw new Error("no sessions run finished");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** Every position `checkpoints FINAL` showed, per stream, in the order read. */
function watchCheckpoints(w: Warehouse): {
  seen: Map<string, number[]>;
  stop: () => Promise<void>;
} {
  const seen = new Map<string, number[]>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const rows = await select<{ stream: string; p: string }>(
        w,
        "SELECT stream, toUnixTimestamp64Milli(position) AS p FROM {db}.checkpoints FINAL",
      ).catch(() => []);
      for (const r of rows)
        seen.set(r.stream, [...(seen.get(r.stream) ?? []), Number(r.p)]);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    seen,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/** A command of another process than the services' (the CLI's main in this one), with their settings. */
function command(...args: string[]) {
  const vars: Record<string, string> = {};
  for (const [k, v] of Object.entries(env))
    if (
      v !== undefined &&
      (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
    )
      vars[k] = v;
  return mainInProcess(vars, ...args);
}

async function statusJson(): Promise<StatusReport> {
  const r = await command("status", "--json");
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as StatusReport;
}

describe("two run processes on one database", () => {
  it("one holds the lease, the other waits and takes over; checkpoints never move back; the record equals one process's", async () => {
    const w = await openWarehouse(config);
    const watch = watchCheckpoints(w);
    try {
      // A holds the lease and syncs.
      const a = startRun();
      await sessionsRunAfter(a, msg("service lease taken"));
      const aOps = String((await line(a, msg("ops server listening"))).url);

      // B waits: live, not ready, says who holds it.
      const b = startRun();
      const waiting = await line(
        b,
        msg("waiting for the service lease: another process holds it"),
      );
      expect(waiting.holder).toEqual({
        host: hostname(),
        pid: a.child.pid,
        command: "run",
      });
      const bOps = String((await line(b, msg("ops server listening"))).url);
      expect((await get(`${bOps}/healthz`)).status).toBe(200);
      const notReady = await get(`${bOps}/readyz`);
      expect(notReady.status).toBe(503);
      expect(JSON.parse(notReady.text)).toMatchObject({
        ready: false,
        reasons: expect.arrayContaining([
          expect.stringContaining("standby: waiting for the service lease"),
        ]) as unknown,
        lease: { phase: "waiting", holder: { pid: a.child.pid } },
      });
      const bMetrics = parsePrometheusText((await get(`${bOps}/metrics`)).text);
      expect(sampleValue(bMetrics, "sessionhouse_lease_waiting", {})).toBe(1);
      expect(sampleValue(bMetrics, "sessionhouse_lease_held", {})).toBe(0);
      const aMetrics = parsePrometheusText((await get(`${aOps}/metrics`)).text);
      expect(sampleValue(aMetrics, "sessionhouse_lease_held", {})).toBe(1);
      expect(
        sampleValue(aMetrics, "sessionhouse_lease_holder_info", {
          host: hostname(),
          pid: String(a.child.pid),
          command: "run",
        }),
      ).toBe(1);
      const aReady = JSON.parse((await get(`${aOps}/readyz`)).text) as {
        lease: unknown;
      };
      expect(aReady.lease).toMatchObject({ phase: "held" });
      expect(b.logs.some(msg("scheduler started"))).toBe(false);

      // status names the holder; a one-shot sync is refused, naming it too.
      expect((await statusJson()).lease?.holder).toMatchObject({
        pid: a.child.pid,
        command: "run",
      });
      const refused = await command("sync", "rollups");
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(
        `error: sync refused: the service lease of this database is held by run (pid ${String(a.child.pid)} on ${hostname()})`,
      );
      expect(refused.stderr).toContain("hint: stop that process");

      // A pauses (alive, so not provably gone): B takes over once A's claim expires.
      a.child.kill("SIGSTOP");
      await sessionsRunAfter(b, msg("service lease taken"));
      expect(b.logs.some(msg(GONE))).toBe(false);

      // A resumes, finds the lease lost, stops its jobs and exits 1.
      a.child.kill("SIGCONT");
      const aEnd = await a.result;
      expect(aEnd.code).toBe(1);
      expect(aEnd.stderr).toContain("error: the service lease was lost");
      expect(
        aEnd.logs.some((l) =>
          String(l.msg).startsWith("the service lease was lost"),
        ),
      ).toBe(true);

      // A restart waits for B; B is killed: the restart takes over at once.
      const c = startRun();
      const cWaiting = await line(
        c,
        msg("waiting for the service lease: another process holds it"),
      );
      expect(holderPid(cWaiting)).toBe(b.child.pid);
      b.child.kill("SIGKILL");
      expect((await b.result).signal).toBe("SIGKILL");
      await sessionsRunAfter(c, msg("service lease taken"));
      expect(holderPid(await line(c, msg(GONE)))).toBe(b.child.pid);

      // SIGTERM: C stops and releases the lease.
      c.child.kill("SIGTERM");
      const cEnd = await c.result;
      expect(cEnd.code, cEnd.stderr).toBe(0);
      expect(cEnd.logs.some(msg("service lease released"))).toBe(true);
      expect((await statusJson()).lease).toMatchObject({
        holder: null,
        last: { pid: c.child.pid, ended: "released" },
      });

      await watch.stop();
      // Checkpoints never moved back, as read all along.
      expect(watch.seen.get("sessions")?.length ?? 0).toBeGreaterThan(1);
      for (const [stream, positions] of watch.seen)
        expect(
          positions.filter((p, i) => i > 0 && p < (positions[i - 1] ?? 0)),
          stream,
        ).toEqual([]);
      await expectNoDuplicates(w);
      await expectSimulatorSessions(w, a);
    } finally {
      await watch.stop();
      await w.close();
    }
  }, 300_000);
});

/** Every ReplacingMergeTree table holds one row per sorting key under FINAL. */
async function expectNoDuplicates(w: Warehouse): Promise<void> {
  const tables = await select<{ name: string; sorting_key: string }>(
    w,
    `SELECT name, sorting_key FROM system.tables
     WHERE database = {db:String} AND engine LIKE '%ReplacingMergeTree'`,
    { db: w.database },
  );
  expect(tables.map((t) => t.name)).toContain("sessions");
  for (const t of tables) {
    const [r] = await select<{ rows: string; keys: string }>(
      w,
      `SELECT (SELECT count() FROM {db}.\`${t.name}\` FINAL) AS rows,
              (SELECT count() FROM (SELECT DISTINCT ${t.sorting_key} FROM {db}.\`${t.name}\` FINAL)) AS keys`,
    );
    expect(Number(r?.rows), t.name).toBe(Number(r?.keys));
  }
}

/** The sessions stored from the first sync's start to the checkpoint are the simulator's. */
async function expectSimulatorSessions(
  w: Warehouse,
  first: CliRun,
): Promise<void> {
  const fromMs = Date.parse(
    String((first.logs.find(msg("syncing sessions")) ?? {}).from),
  );
  const cp = await readCheckpoint(w, "sessions");
  const toMs = cp?.positionMs ?? 0;
  expect(toMs).toBeGreaterThan(fromMs);
  const expected = (await expectedSessions(sim, fromMs, toMs))
    .map((s) => String(s.id))
    .sort();
  const stored = (
    await select<{ id: string }>(
      w,
      `SELECT id FROM {db}.sessions FINAL
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}, 'UTC')
         AND start_time < fromUnixTimestamp64Milli({to:Int64}, 'UTC')
       ORDER BY id`,
      { from: fromMs, to: toMs },
    )
  ).map((r) => r.id);
  expect(expected.length).toBeGreaterThan(0);
  expect(stored).toEqual(expected);
}
