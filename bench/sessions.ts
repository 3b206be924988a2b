// The sessions part of `npm run bench`, on the embedded engine and on a server (the HTTP front
// over the same engine, in a process of its own): end-to-end throughput against the engine's
// own ingest of the same records from a file, peak RSS at page size 100000 against 1000, and
// time against volume. Three runs of everything; the targets are judged on the medians.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  API_KEY,
  benchDir,
  cpuSeconds,
  dataDir,
  DAY,
  END_MS,
  fmt,
  median,
  ROOT,
  RUNS,
  scenario,
  startSimulator,
  stop,
  verdict,
  warm,
  type SessionsResult,
} from "./harness.js";
import type { EngineIngest } from "./scenario.js";

/** A ClickHouse HTTP front over a fresh data directory, in its own process. */
interface Front {
  url: string;
  child: ChildProcess;
  dir: string;
}

async function startFront(): Promise<Front> {
  const dir = mkdtempSync(join(benchDir(), "front-"));
  const child = spawn(
    process.execPath,
    [join(ROOT, "scripts", "http-front.mjs")],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, HTTP_FRONT_DATA_DIR: dir },
    },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /CLICKHOUSE_URL=(\S+)/.exec(out);
      if (m?.[1]) resolveUrl(m[1]);
    });
    child.on("exit", (code) =>
      reject(new Error(`the HTTP front exited with ${code}`)),
    );
  });
  return { url, child, dir };
}

async function stopFront(front: Front): Promise<void> {
  await new Promise<void>((done) => {
    front.child.on("exit", () => done());
    front.child.kill("SIGTERM");
  });
  rmSync(front.dir, { recursive: true, force: true });
}

/** One run of the three measurements on one path. */
interface Run {
  big: SessionsResult;
  limit: EngineIngest;
  tenthBig: SessionsResult;
  tenthSmall: SessionsResult;
  /** CPU the simulator used while the big sync ran. */
  simCpu: number;
  /** CPU the HTTP front (the server's engine) used during the big sync itself. */
  serverCpu?: number;
  /**
   * CPU the HTTP front used over the big sync's whole scenario: also the DROP DATABASE and the
   * migration before the sync and the counts after it.
   */
  scenarioServerCpu?: number;
}

const e2eRate = (r: Run) => r.big.rows / (r.big.ms / 1000);
const limitRate = (r: Run) => r.limit.rows / (r.limit.ms / 1000);
const throughput = (r: Run) => e2eRate(r) / limitRate(r);
/** The time of the setup `name` of the engine-ingest scenario in run `r`. */
const setupMs = (r: Run, name: string) =>
  r.limit.setups.find((s) => s.name === name)?.ms ?? NaN;
const everythingThroughput = (r: Run) =>
  e2eRate(r) / (r.limit.rows / (setupMs(r, "everything") / 1000));
const rssRatio = (r: Run) => r.tenthBig.rssMB / r.tenthSmall.rssMB;
const timeRatio = (r: Run) => r.big.ms / r.tenthBig.ms;
const volumeRatio = (r: Run) => r.big.rows / r.tenthBig.rows;
const cpuPer100k = (r: Run) => (r.big.cpuMs / r.big.rows) * 100_000;

/**
 * What each part of `sessions` costs the engine's ingest (the first run, which times them): the
 * bare table, + each materialized view alone, + the codecs and skip indexes alone, + everything;
 * each setup's best of two, the share it adds to the bare table's time, and the bytes a session
 * takes in the copy of `sessions`.
 */
function costTable(say: (line: string) => void, first: Run | undefined): void {
  if (!first) return;
  const bare = setupMs(first, "bare");
  const bareCpu =
    first.limit.setups.find((s) => s.name === "bare")?.cpuS ?? NaN;
  say(
    "What each part of `sessions` adds to the engine's ingest of the same records (run 1, each setup's best of two tries, wall time and the engine process's CPU; bytes on disk of the copy of `sessions` right after the insert, before any merge):",
  );
  say("");
  say(
    "| setup | seconds | adds to the bare table | engine CPU seconds | adds to the bare table | bytes/session |",
  );
  say("|---|---|---|---|---|---|");
  for (const s of first.limit.setups) {
    const adds = (v: number, base: number) =>
      s.name === "bare" ? "" : `${fmt(((v - base) / base) * 100, 0)}%`;
    say(
      `| ${s.name} | ${fmt(s.ms / 1000, 2)} | ${adds(s.ms, bare)} | ${fmt(s.cpuS, 2)} | ${adds(s.cpuS, bareCpu)} | ${fmt(s.bytes / first.limit.rows, 0)} |`,
    );
  }
  say("");
}

export async function benchSessions(
  say: (line: string) => void,
  targets: string[],
  sessions: number,
): Promise<void> {
  const perDay = Math.round(sessions / 10);
  const sim = await startSimulator([
    "--sessions-per-day",
    String(perDay),
    "--history-days",
    "14",
    "--bench",
    // Every page of the run pre-built and kept (~1 GB for 1M sessions and the two 1-day
    // runs): with a smaller cache the 1M run would make the simulator rebuild pages beside
    // the exporter, and its CPU would be measured as the exporter's slowness.
    "--bench-cache-mb",
    "2048",
    "--seed",
    "7",
  ]);
  const millionFrom = END_MS - 10 * DAY;
  // The first day of the range, a weekday: about a tenth of the sessions.
  const tenthFrom = millionFrom;
  const tenthTo = millionFrom + DAY;
  process.stderr.write("bench: pre-building the simulator's pages…\n");
  await warm(sim.url, millionFrom, END_MS, 100_000);
  await warm(sim.url, tenthFrom, tenthTo, 100_000);
  await warm(sim.url, tenthFrom, tenthTo, 1_000);

  const sync = (
    name: string,
    pageSize: number,
    fromMs: number,
    toMs: number,
    front: Front | undefined,
  ) =>
    scenario<SessionsResult>({
      kind: "sessions",
      url: sim.url,
      apiKey: API_KEY,
      dataDir: dataDir(name),
      pageSize,
      fromMs,
      toMs,
      ...(front ? { clickhouseUrl: front.url } : {}),
      ...(front?.child.pid !== undefined ? { serverPid: front.child.pid } : {}),
    });

  /** One run on the embedded engine, or on a server when `server` is set. */
  const run = async (server: boolean, i: number): Promise<Run> => {
    const path = server ? "server" : "embedded";
    const front = server ? await startFront() : undefined;
    try {
      process.stderr.write(
        `bench: ${path} run ${i + 1}/${RUNS}: ${fmt(sessions)} sessions at page size 100000…\n`,
      );
      const simBefore = cpuSeconds(sim.child);
      const frontBefore = front ? cpuSeconds(front.child) : 0;
      const big = await sync("1m", 100_000, millionFrom, END_MS, front);
      const simCpu = cpuSeconds(sim.child) - simBefore;
      const scenarioServerCpu = front
        ? cpuSeconds(front.child) - frontBefore
        : 0;
      process.stderr.write(
        `bench: ${path} run ${i + 1}/${RUNS}: the engine's own ingest of the same records…\n`,
      );
      const limit = await scenario<EngineIngest>({
        kind: "engine-ingest",
        dataDir: dataDir("1m"),
        // What each part of `sessions` costs is timed in the first run only (a dozen inserts).
        breakdown: i === 0,
        ...(front?.child.pid !== undefined
          ? { serverPid: front.child.pid }
          : {}),
        ...(front ? { clickhouseUrl: front.url } : {}),
      });
      process.stderr.write(
        `bench: ${path} run ${i + 1}/${RUNS}: one day at page size 100000 and 1000…\n`,
      );
      const tenthBig = await sync(
        "day-big",
        100_000,
        tenthFrom,
        tenthTo,
        front,
      );
      const tenthSmall = await sync(
        "day-small",
        1_000,
        tenthFrom,
        tenthTo,
        front,
      );
      return {
        big,
        limit,
        tenthBig,
        tenthSmall,
        simCpu,
        ...(front
          ? { serverCpu: big.serverCpuS ?? NaN, scenarioServerCpu }
          : {}),
      };
    } finally {
      if (front) await stopFront(front);
    }
  };

  const report = (server: boolean, results: Run[]) => {
    const title = server
      ? "## Sessions sync, server path (simulator → the HTTP front's ClickHouse interface, engine in another process; inserts not gzipped, the default toward a server that is not ClickHouse Cloud)"
      : "## Sessions sync (simulator → embedded ClickHouse)";
    say(title);
    say("");
    say(
      `${RUNS} runs; the targets are judged on the medians. The limit: the engine inserting the same records (one JSON object a line) from a file with the sync's own row-building SELECT into a bare copy of \`sessions\` (its columns, engine, partitions and order; the engine's default compression, no skip index, no materialized view), best of two; "as migrated" (run 1): the same insert into a copy of \`sessions\` with its codecs, skip indexes and a copy of each materialized view on it (${results[0]?.limit.views.join(", ") ?? ""}).`,
    );
    say("");
    say(
      `| run | end-to-end, page size 100000 | engine ingest limit (bare table) | ÷ limit | as migrated | ÷ as migrated | RSS at 100000 / 1000 | ÷ | time 1 day / 10 days | ÷ (volume ratio) |${server ? " exporter CPU per 100k |" : ""}`,
    );
    say(`|---|---|---|---|---|---|---|---|---|---|${server ? "---|" : ""}`);
    results.forEach((r, i) =>
      say(
        `| ${i + 1} | ${fmt(r.big.rows)} sessions in ${fmt(r.big.ms / 1000, 1)} s, ${fmt(e2eRate(r))} rows/s, ${fmt(r.big.bytes / 2 ** 20 / (r.big.ms / 1000), 1)} MB/s, peak RSS ${fmt(r.big.rssMB)} MB (simulator CPU ${fmt(r.simCpu, 1)} s${r.serverCpu !== undefined ? `, server CPU ${fmt(r.serverCpu, 1)} s in the sync, ${fmt(r.scenarioServerCpu ?? NaN, 1)} s with the migration` : ""}) | ${fmt(r.limit.ms / 1000, 1)} s, ${fmt(limitRate(r))} rows/s | ${fmt(throughput(r), 2)} | ${r.limit.setups.length > 1 ? `${fmt(setupMs(r, "everything") / 1000, 1)} s | ${fmt(everythingThroughput(r), 2)}` : "– | –"} | ${fmt(r.tenthBig.rssMB)} / ${fmt(r.tenthSmall.rssMB)} MB | ${fmt(rssRatio(r), 2)} | ${fmt(r.tenthBig.ms / 1000, 1)} s / ${fmt(r.big.ms / 1000, 1)} s | ${fmt(timeRatio(r), 2)} (${fmt(volumeRatio(r), 2)}) |${server ? ` ${fmt(cpuPer100k(r) / 1000, 2)} s |` : ""}`,
      ),
    );
    const m = {
      throughput: median(results.map(throughput)),
      everything: median(
        results
          .filter((r) => r.limit.setups.length > 1)
          .map(everythingThroughput),
      ),
      rss: median(results.map(rssRatio)),
      time: median(results.map(timeRatio)),
      volume: median(results.map(volumeRatio)),
      cpu: median(results.map(cpuPer100k)),
      e2e: median(results.map(e2eRate)),
      limit: median(results.map(limitRate)),
    };
    say(
      `| median | ${fmt(m.e2e)} rows/s | ${fmt(m.limit)} rows/s | ${fmt(m.throughput, 2)} | | ${fmt(m.everything, 2)} | | ${fmt(m.rss, 2)} | | ${fmt(m.time, 2)} (${fmt(m.volume, 2)}) |${server ? ` ${fmt(m.cpu / 1000, 2)} s |` : ""}`,
    );
    say("");
    costTable(say, results[0]);
    const on = server ? " (server path)" : "";
    targets.push(
      `end-to-end ≥ 0.8 × the engine's own ingest into a bare \`sessions\`${on}: median ${fmt(m.throughput, 2)} — ${verdict(m.throughput >= 0.8)}`,
      `end-to-end against the engine's ingest into \`sessions\` as migrated (codecs, skip indexes, views)${on}: ${fmt(m.everything, 2)} in run 1 (printed, no target)`,
      `peak RSS at 100000 ≤ 1.25 × at 1000${on}: median ${fmt(m.rss, 2)} — ${verdict(m.rss <= 1.25)}`,
      `time(10 days) ≤ 1.05 × volume ratio × time(1 day)${on}: median ${fmt(m.time, 2)} for ${fmt(m.volume, 2)}× the sessions (limit ${fmt(1.05 * m.volume, 2)}) — ${verdict(m.time <= 1.05 * m.volume)}`,
    );
    if (server) {
      const setupCpu = (name: string) =>
        results[0]?.limit.setups.find((s) => s.name === name)?.cpuS ?? NaN;
      targets.push(
        `exporter CPU per 100k sessions on the server path: median ${fmt(m.cpu / 1000, 2)} s (printed, no target)`,
        `server CPU in the sync (the front and its engine): median ${fmt(median(results.map((r) => r.serverCpu ?? NaN)), 1)} s; the engine's own insert of the same records, run 1: ${fmt(setupCpu("everything"), 1)} s as migrated, ${fmt(setupCpu("bare"), 1)} s bare (printed, no target)`,
      );
    }
  };

  try {
    for (const server of [false, true]) {
      const results: Run[] = [];
      for (let i = 0; i < RUNS; i++) results.push(await run(server, i));
      report(server, results);
    }
  } finally {
    await stop(sim);
  }
}
