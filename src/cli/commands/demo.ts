// `sessionhouse demo`: the whole path with no account and no server. An in-process simulator
// of the control plane on a free port, the embedded ClickHouse (or CLICKHOUSE_URL), a sync of
// the last N days and of every entity stream, and a summary of what landed.
import { randomBytes } from "node:crypto";
import { startSimulator } from "../../simulator/index.js";
import { withRun } from "../../pipeline/context.js";
import {
  aggregationSummary,
  entitySummary,
  sessionSummary,
  type SummaryTable,
  type Warehouse,
} from "../../warehouse/index.js";
import { configFrom, withRuntime } from "../runtime.js";
import type { GlobalOptions, Runtime } from "../runtime.js";
import { heading, printTable } from "../output.js";
import {
  aggregationName,
  AGGREGATIONS,
  ENTITY_STREAMS,
  SESSIONS_JOB,
  SESSIONS_STREAM,
} from "../../pipeline/names.js";
import { syncStream } from "../../pipeline/streams.js";
import { counted } from "../output.js";

const AGGREGATION_DAYS = 2;

interface DemoOptions {
  days: number;
  seed: number;
  sessionsPerDay?: number | undefined;
}

export async function runDemo(
  globals: GlobalOptions,
  options: DemoOptions,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const apiKey = `demo-${randomBytes(12).toString("hex")}`;
  const sim = await startSimulator({
    port: 0,
    seed: options.seed,
    apiKey,
    ...(options.sessionsPerDay
      ? { sessionsPerDay: options.sessionsPerDay }
      : {}),
    historyDays: Math.max(90, options.days + 1),
  });
  try {
    const config = configFrom(globals, {
      "api.url": sim.url,
      "api.apiKey": apiKey,
      "api.maxRequestsPerSecond": 1000,
      "sessions.initialLookbackMs": options.days * 86_400_000,
      "log.level": globals.logLevel ?? "warn",
    });
    await withRuntime(config, "demo", async (rt) => {
      out.write(
        `sessionhouse demo: simulated control plane at ${sim.url} (seed ${options.seed}), ClickHouse ${rt.warehouse.kind} at ${rt.warehouse.location}\n`,
      );
      await syncDemoSessions(rt, out);
      await syncDemoAggregations(rt, options.days, out);
      await syncDemoEntities(rt, out);
      await printSummary(rt.warehouse, out);
      await printAggregationSummary(rt.warehouse, out);
      printSummaries(await entitySummary(rt.warehouse), out);
      out.write(LOOK_FURTHER);
    });
  } finally {
    await sim.close();
  }
}

const LOOK_FURTHER =
  `\nLook further:\n  npx sessionhouse query "SELECT count() FROM sessions FINAL"\n  npx sessionhouse query "SELECT user_email, count() AS n FROM sessions FINAL GROUP BY user_email ORDER BY n DESC LIMIT 10"\n` +
  `Run the demo again to add only what is new.\n`;

/** The sessions of the configured initial lookback (the demo's --days), or what is new since the last demo. */
async function syncDemoSessions(
  rt: Runtime,
  out: NodeJS.WritableStream,
): Promise<void> {
  const started = performance.now();
  const sessions = await withRun(rt, SESSIONS_JOB, (ctx) =>
    syncStream(ctx, SESSIONS_STREAM, {}),
  );
  const seconds = (performance.now() - started) / 1000;
  out.write(
    `synced ${counted(sessions.rows, "session read")} over ${counted(sessions.windows, "window")} (${new Date(sessions.startMs).toISOString()} → ${new Date(sessions.endMs).toISOString()}) in ${seconds.toFixed(1)} s` +
      (sessions.deadLetters ? `, ${sessions.deadLetters} dead-lettered` : "") +
      "\n",
  );
}

/** Every enabled aggregation job over at most AGGREGATION_DAYS of the demo's days. */
async function syncDemoAggregations(
  rt: Runtime,
  days: number,
  out: NodeJS.WritableStream,
): Promise<void> {
  const started = performance.now();
  let rows = 0;
  for (const job of rt.config.aggregations.jobs.filter((j) => j.enabled)) {
    // Log aggregations are much denser than sessions: the demo keeps them to two days.
    const r = await withRun(rt, aggregationName(job), (ctx) =>
      syncStream(ctx, AGGREGATIONS, {
        job,
        initialLookbackMs: Math.min(days, AGGREGATION_DAYS) * 86_400_000,
      }),
    );
    rows += r.rows;
  }
  out.write(
    `synced ${rt.config.aggregations.jobs.length} log-aggregation jobs over the last ${Math.min(days, AGGREGATION_DAYS)} days (${rows} rows) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

/** Every entity stream once (users first: devices are read per user known). */
async function syncDemoEntities(
  rt: Runtime,
  out: NodeJS.WritableStream,
): Promise<void> {
  const started = performance.now();
  const parts: string[] = [];
  for (const stream of ENTITY_STREAMS) {
    const r = await withRun(rt, stream, (ctx) => syncStream(ctx, stream, {}));
    parts.push(`${stream} ${r.read}`);
  }
  out.write(
    `synced the directory (${parts.join(", ")}) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

function printSummaries(
  summaries: readonly SummaryTable[],
  out: NodeJS.WritableStream,
): void {
  for (const { title, rows } of summaries) {
    heading(title, out);
    printTable(rows, out);
  }
}

async function printSummary(
  w: Warehouse,
  out: NodeJS.WritableStream,
): Promise<void> {
  printSummaries(await sessionSummary(w), out);
}

async function printAggregationSummary(
  w: Warehouse,
  out: NodeJS.WritableStream,
): Promise<void> {
  printSummaries(await aggregationSummary(w), out);
}
