// `sessionhouse demo`: the whole path with no account and no server. An in-process simulator
// of the control plane on a free port, the embedded ClickHouse (or CLICKHOUSE_URL), a sync of
// the last N days, and a summary of what landed.
import { randomBytes } from "node:crypto";
import { startSimulator } from "../../simulator/index.js";
import { withRun } from "../../pipeline/context.js";
import { SESSIONS_JOB, syncSessions } from "../../pipeline/sessions.js";
import {
  aggregationStream,
  syncAggregations,
} from "../../pipeline/aggregations.js";
import { qualified, type Warehouse } from "../../warehouse/client.js";
import { configFrom, openRuntime, type GlobalOptions } from "../runtime.js";
import { heading, printTable } from "../output.js";

const AGGREGATION_DAYS = 2;

export interface DemoOptions {
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
    const rt = await openRuntime(config);
    try {
      out.write(
        `sessionhouse demo: simulated control plane at ${sim.url} (seed ${options.seed}), ClickHouse ${rt.warehouse.kind} at ${rt.warehouse.location}\n`,
      );
      const started = performance.now();
      const sessions = await withRun(rt, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx),
      );
      const seconds = (performance.now() - started) / 1000;
      out.write(
        `synced ${sessions.rows} session reads over ${sessions.windows} windows (${new Date(sessions.startMs).toISOString()} → ${new Date(sessions.endMs).toISOString()}) in ${seconds.toFixed(1)} s` +
          (sessions.deadLetters
            ? `, ${sessions.deadLetters} dead-lettered`
            : "") +
          "\n",
      );
      const aggStarted = performance.now();
      let aggRows = 0;
      for (const job of rt.config.aggregations.jobs.filter((j) => j.enabled)) {
        // Log aggregations are much denser than sessions: the demo keeps them to two days.
        const r = await withRun(rt, aggregationStream(job), (ctx) =>
          syncAggregations(ctx, job, {
            initialLookbackMs:
              Math.min(options.days, AGGREGATION_DAYS) * 86_400_000,
          }),
        );
        aggRows += r.rows;
      }
      out.write(
        `synced ${rt.config.aggregations.jobs.length} log-aggregation jobs over the last ${Math.min(options.days, AGGREGATION_DAYS)} days (${aggRows} rows) in ${((performance.now() - aggStarted) / 1000).toFixed(1)} s\n`,
      );
      await printSummary(rt.warehouse, out);
      await printAggregationSummary(rt.warehouse, out);
      out.write(
        `\nLook further:\n  npx sessionhouse query "SELECT count() FROM sessions FINAL"\n  npx sessionhouse query "SELECT user_email, count() AS n FROM sessions FINAL GROUP BY user_email ORDER BY n DESC LIMIT 10"\n` +
          `Run the demo again to add only what is new.\n`,
      );
    } finally {
      await rt.close();
    }
  } finally {
    await sim.close();
  }
}

async function rows(
  w: Warehouse,
  sql: string,
): Promise<Record<string, unknown>[]> {
  const rs = await w.client.query({ query: sql, format: "JSONEachRow" });
  return rs.json<Record<string, unknown>>();
}

export async function printSummary(
  w: Warehouse,
  out: NodeJS.WritableStream,
): Promise<void> {
  const sessions = qualified(w, "sessions");
  heading("Sessions stored", out);
  printTable(
    await rows(
      w,
      `SELECT count() AS sessions, uniqExact(user_id) AS users, uniqExact(resource_id) AS resources,
              min(start_time) AS first_start, max(start_time) AS last_start FROM ${sessions} FINAL`,
    ),
    out,
  );
  heading("Sessions by technology", out);
  printTable(
    await rows(
      w,
      `SELECT resource_technology AS technology, count() AS sessions,
              round(quantile(0.5)(duration_ms) / 1000, 1) AS p50_seconds
       FROM ${sessions} FINAL GROUP BY technology ORDER BY sessions DESC LIMIT 22`,
    ),
    out,
  );
  heading("Busiest users", out);
  printTable(
    await rows(
      w,
      `SELECT if(user_email != '', user_email, user_name) AS user, user_account_type AS type, count() AS sessions,
              uniqExact(resource_id) AS resources
       FROM ${sessions} FINAL GROUP BY user, type ORDER BY sessions DESC LIMIT 5`,
    ),
    out,
  );
  heading("Busiest resources", out);
  printTable(
    await rows(
      w,
      `SELECT resource_name AS resource, resource_technology AS technology, count() AS sessions,
              uniqExact(user_id) AS users
       FROM ${sessions} FINAL GROUP BY resource, technology ORDER BY sessions DESC LIMIT 5`,
    ),
    out,
  );
  heading("Sessions still open", out);
  printTable(
    await rows(
      w,
      `SELECT session_status AS status, count() AS sessions, min(start_time) AS oldest_start
       FROM ${sessions} FINAL WHERE session_status != 'completed' GROUP BY status ORDER BY status`,
    ),
    out,
  );
}

export async function printAggregationSummary(
  w: Warehouse,
  out: NodeJS.WritableStream,
): Promise<void> {
  const histogram = qualified(w, "agg_histogram");
  const top = qualified(w, "agg_top_values");
  heading("Policies triggered (log aggregations)", out);
  printTable(
    await rows(
      w,
      `SELECT key1 AS policy, key2 AS status, sum(count) AS events FROM ${histogram} FINAL
       WHERE job = 'policies_by_name_status' AND level = 2 AND count > 0
       GROUP BY policy, status ORDER BY events DESC LIMIT 5`,
    ),
    out,
  );
  heading("LLM calls by provider and model", out);
  printTable(
    await rows(
      w,
      `SELECT key1 AS provider, key2 AS model, sum(count) AS calls FROM ${histogram} FINAL
       WHERE job = 'llm_by_provider_model' AND level = 2 AND count > 0
       GROUP BY provider, model ORDER BY calls DESC LIMIT 5`,
    ),
    out,
  );
  heading("Data labels returned (sum of per-window top values)", out);
  printTable(
    await rows(
      w,
      `SELECT key AS data_label, sum(count) AS columns_returned FROM ${top} FINAL
       WHERE job = 'logs_by_technology' AND member = 'responseReturnedColumnDataLabels' AND count > 0
       GROUP BY data_label ORDER BY columns_returned DESC LIMIT 6`,
    ),
    out,
  );
}
