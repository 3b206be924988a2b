// Time to detect: from a session's start at the control plane to its hit in detection_hits, under
// the real `run` (the built CLI, default schedules, the embedded engine in a data directory of the
// bench run). The simulator serves, on the real clock, a replay of session records: background
// sessions every few seconds and, every BENCH_TTD_EVERY_S seconds at a random second of that
// interval, a session from an Equation Group C2 address, which the shipped paging rule
// equation-group-c2 (severity high) hits. Each intruder session exists at the simulator from its
// start on (the replay serves no session before the clock reaches its start), so its start is
// also the real time it appeared; the bench polls detection_hits through `sessionhouse query`
// (read-only, through the service's read access while `run` holds the engine) and takes the
// first poll that shows the session's hit.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  API_KEY,
  benchDir,
  listSessionsPage,
  dataDir,
  END_MS,
  fmt,
  percentile,
  ROOT,
  startSimulator,
  stop,
  verdict,
} from "./harness.js";

const CLI = join(ROOT, "bin", "sessionhouse.js");
/** The rule whose hits are measured, and addresses it hits (detections/equation-group-c2.yaml). */
const RULE = "equation-group-c2";
const C2_ADDRESSES = ["69.42.98.86", "89.185.234.145"];
/** Real minutes over which intruder sessions start (BENCH_TTD_MINUTES, default 60). */
const MINUTES = Number(process.env.BENCH_TTD_MINUTES ?? 60);
/** One intruder session per this many seconds (BENCH_TTD_EVERY_S, default 60). */
const EVERY_S = Number(process.env.BENCH_TTD_EVERY_S ?? 60);
/** A background session every this many seconds. */
const BACKGROUND_EVERY_S = 5;
/** Before the first intruder: `run` starts, migrates and makes its first reads. */
const WARM_UP_MS = 120_000;
/** How often detection_hits is read. */
const POLL_MS = 3_000;
/** After the last intruder's start: longer than any time to detect the target allows. */
const GRACE_MS = 600_000;
/** The targets: the sessions job and the detections job each tick every minute (see docs/performance.md). */
const TARGET_P50_S = 120;
const TARGET_P95_S = 180;

type WireRecord = Record<string, unknown> & {
  id: string;
  startTime: string;
  endTime?: string;
  network?: Record<string, unknown>;
};

interface Injected {
  id: string;
  startMs: number;
}

interface TimeToDetect {
  injected: number;
  detected: number;
  ttdS: number[];
}

/** Completed sessions of at most five minutes from the generated simulator, as templates. */
async function templates(): Promise<WireRecord[]> {
  const sim = await startSimulator([
    "--sessions-per-day",
    "4000",
    "--seed",
    "3",
  ]);
  try {
    const res = await listSessionsPage(sim.url, {
      fromMs: END_MS - 86_400_000,
      toMs: END_MS,
      limit: 500,
    });
    const body = (await res.json()) as { sessions?: WireRecord[] };
    const short = (body.sessions ?? []).filter(
      (s) =>
        s.sessionStatus === "completed" &&
        s.endTime !== undefined &&
        Date.parse(s.endTime) - Date.parse(s.startTime) <= 300_000,
    );
    if (short.length < 10) throw new Error("too few template sessions");
    return short;
  } finally {
    await stop(sim);
  }
}

/** A template moved to start at `startMs`, its duration kept, under a new id. */
function moved(t: WireRecord, id: string, startMs: number): WireRecord {
  const end = t.endTime ? Date.parse(t.endTime) - Date.parse(t.startTime) : 0;
  return {
    ...t,
    id,
    startTime: new Date(startMs).toISOString(),
    ...(t.endTime ? { endTime: new Date(startMs + end).toISOString() } : {}),
  };
}

/** The replay file and the intruder sessions in it, from `t0` on (real time). */
function replayFile(
  all: WireRecord[],
  t0: number,
): { file: string; intruders: Injected[] } {
  // A fixed seed: the same offsets in every run.
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const records: WireRecord[] = [];
  const intruders: Injected[] = [];
  const first = t0 + WARM_UP_MS;
  const end = first + MINUTES * 60_000;
  const pick = (i: number) => all[i % all.length] as WireRecord;
  for (
    let i = 0, t = t0 - 600_000;
    t < end;
    i++, t += BACKGROUND_EVERY_S * 1000
  )
    records.push(moved(pick(i), `ses_ttd_bg_${i}`, t));
  for (let i = 0; first + i * EVERY_S * 1000 < end; i++) {
    const startMs = Math.floor(first + (i + rand()) * EVERY_S * 1000);
    const base = moved(pick(i * 7 + 3), `ses_ttd_c2_${i}`, startMs);
    const address = C2_ADDRESSES[i % C2_ADDRESSES.length] as string;
    records.push({
      ...base,
      network: { ...(base.network ?? {}), clientIpAddress: address },
    });
    intruders.push({ id: base.id, startMs });
  }
  const file = join(benchDir(), "ttd-sessions.jsonl");
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`, {
    mode: 0o600,
  });
  return { file, intruders };
}

function runEnv(url: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    SESSIONHOUSE_API_URL: url,
    SESSIONHOUSE_API_KEY: API_KEY,
    SESSIONHOUSE_DATA_DIR: dataDir("ttd"),
    SESSIONHOUSE_OPS_PORT: "0",
    SESSIONHOUSE_LOG_LEVEL: "warn",
    CLICKHOUSE_URL: "",
  };
}

/** The sessions of the rule's hits stored so far, read through the service. */
function hitSessions(env: NodeJS.ProcessEnv): string[] {
  const r = spawnSync(
    process.execPath,
    [
      CLI,
      "query",
      "--format",
      "TSV",
      `SELECT DISTINCT arrayJoin(session_ids) FROM detection_hits WHERE rule_id = '${RULE}'`,
    ],
    { env, encoding: "utf8", timeout: 30_000 },
  );
  return r.status === 0 ? r.stdout.split("\n").filter((l) => l !== "") : [];
}

/** Polls until every intruder's hit is seen or the grace after the last start ends. */
async function watch(
  env: NodeJS.ProcessEnv,
  intruders: Injected[],
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  const deadline = Math.max(...intruders.map((i) => i.startMs)) + GRACE_MS;
  let lastReport = 0;
  while (seen.size < intruders.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    const at = Date.now();
    for (const id of hitSessions(env)) if (!seen.has(id)) seen.set(id, at);
    if (at - lastReport > 60_000) {
      lastReport = at;
      const started = intruders.filter((i) => i.startMs <= at).length;
      process.stderr.write(
        `bench: time to detect: ${seen.size} of ${started} started sessions detected\n`,
      );
    }
  }
  return seen;
}

function stopRun(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null) return done();
    child.on("exit", () => done());
    child.kill("SIGTERM");
  });
}

/** The measurement: the replay served on the real clock, `run` against it, the hits watched. */
async function measureTimeToDetect(): Promise<TimeToDetect> {
  const all = await templates();
  const { file, intruders } = replayFile(all, Date.now());
  const sim = await startSimulator(
    ["--seed", "3", "--replay-sessions", file],
    "real",
  );
  const env = runEnv(sim.url);
  const run = spawn(process.execPath, [CLI, "run"], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  try {
    const seen = await watch(env, intruders);
    const ttdS = intruders
      .flatMap((i) => {
        const at = seen.get(i.id);
        return at === undefined ? [] : [(at - i.startMs) / 1000];
      })
      .sort((a, b) => a - b);
    return { injected: intruders.length, detected: ttdS.length, ttdS };
  } finally {
    await stopRun(run);
    await stop(sim);
  }
}

/** The part of `npm run bench`: measures, prints, and adds its targets. */
export async function benchTimeToDetect(
  say: (s: string) => void,
  targets: string[],
): Promise<void> {
  process.stderr.write(
    `bench: time to detect over ${MINUTES} real minutes (one session every ${EVERY_S} s)…\n`,
  );
  const r = await measureTimeToDetect();
  const p50 = percentile(r.ttdS, 0.5);
  const p95 = percentile(r.ttdS, 0.95);
  say("## Time to detect");
  say("");
  say(
    `${r.injected} sessions from an Equation Group C2 address started over ${MINUTES} minutes of real time (simulator on the real clock, one every ${EVERY_S} s at a random second, among background sessions every ${BACKGROUND_EVERY_S} s), under \`sessionhouse run\` with the default schedules (sessions and detections every minute) on the embedded engine; from each session's start at the simulator to the first read of detection_hits (every ${POLL_MS / 1000} s, through \`sessionhouse query\`) showing the rule ${RULE}'s hit of it.`,
  );
  say("");
  say("| sessions | detected | p50 | p95 | max |");
  say("|---|---|---|---|---|");
  say(
    `| ${r.injected} | ${r.detected} | ${fmt(p50, 1)} s | ${fmt(p95, 1)} s | ${fmt(r.ttdS[r.ttdS.length - 1] ?? NaN, 1)} s |`,
  );
  say("");
  const all = r.detected === r.injected;
  targets.push(
    `time to detect p50 ≤ ${TARGET_P50_S} s: ${fmt(p50, 1)} s — ${verdict(all && p50 <= TARGET_P50_S)}`,
    `time to detect p95 ≤ ${TARGET_P95_S} s: ${fmt(p95, 1)} s (${r.detected} of ${r.injected} detected) — ${verdict(all && p95 <= TARGET_P95_S)}`,
  );
}
