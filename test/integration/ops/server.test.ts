// The ops endpoint over real HTTP on a free port: /healthz, /readyz with its reasons, /metrics,
// and the readiness rules (ClickHouse reachable, no job overdue).
import { afterEach, describe, expect, it } from "vitest";
import { Metrics } from "../../../src/ops/metrics.js";
import {
  checkReadiness,
  overdueAfterMs,
  overdueJobs,
  type ReadinessReport,
} from "../../../src/ops/readiness.js";
import { startOpsServer, type OpsServer } from "../../../src/ops/server.js";
import type { JobState } from "../../../src/scheduler/index.js";
import { scrubber } from "../../../src/util/logger.js";
import { memoryLogger } from "../../helpers/logs.js";
import { parsePrometheusText, sampleValue } from "../../helpers/prom-text.js";

const NOW = Date.UTC(2026, 10, 16, 12, 0, 0);

function state(
  job: string,
  schedule: string,
  extra: Partial<JobState> = {},
): JobState {
  return {
    job,
    schedule,
    deadlineMs: 60_000,
    phase: "idle",
    runs: 0,
    skippedTicks: 0,
    lastStartMs: undefined,
    lastEndMs: undefined,
    lastSuccessMs: undefined,
    lastError: undefined,
    nextRunMs: undefined,
    ...extra,
  };
}

let server: OpsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("readiness", () => {
  it("allows three schedule periods plus the run deadline since the last success", () => {
    expect(overdueAfterMs(state("s", "* * * * *"))).toBe(3 * 60_000 + 60_000);
    expect(overdueAfterMs(state("a", "*/5 * * * *", { deadlineMs: 0 }))).toBe(
      15 * 60_000,
    );
    // An uneven schedule is judged by its longest gap.
    expect(overdueAfterMs(state("b", "0 9,17 * * *", { deadlineMs: 0 }))).toBe(
      3 * 16 * 3_600_000,
    );
  });

  it("counts from the start of the process until the first success, then from the last success", () => {
    const started = NOW - 10 * 60_000;
    const jobs = [
      state("fresh", "* * * * *", { lastSuccessMs: NOW - 30_000 }),
      state("stale", "* * * * *", { lastSuccessMs: NOW - 5 * 60_000 }),
      state("never", "* * * * *"),
      state("slow", "0 * * * *"),
    ];
    const overdue = overdueJobs(jobs, NOW, started);
    expect(overdue.map((o) => o.job)).toEqual(["stale", "never"]);
    expect(overdue[0]).toMatchObject({
      lastSuccessAt: new Date(NOW - 5 * 60_000).toISOString(),
      overdueAfterMs: 240_000,
      lateByMs: 60_000,
    });
    expect(overdue[1]).toMatchObject({ lastSuccessAt: null });
    expect(
      overdueJobs([state("never", "* * * * *")], NOW, NOW - 60_000),
    ).toEqual([]);
  });

  it("is not ready when ClickHouse does not answer in time, and says why", async () => {
    const report = await checkReadiness({
      ping: () => new Promise<boolean>(() => undefined),
      pingTimeoutMs: 50,
      jobs: () => [],
      startedAtMs: NOW,
      stopping: () => false,
    });
    expect(report.ready).toBe(false);
    expect(report.clickhouse).toEqual({
      ok: false,
      error: "no answer within 50 ms",
    });
    expect(report.reasons[0]).toMatch(/ClickHouse does not answer/);
  });
});

describe("ops server", () => {
  it("serves /healthz, /readyz and /metrics on 127.0.0.1 and a free port", async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.onRows({ job: "sessions", table: "sessions", rows: 3 });
    let report: ReadinessReport = {
      ready: true,
      reasons: [],
      clickhouse: { ok: true },
      overdue: [],
      stopping: false,
    };
    const log = memoryLogger();
    server = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      logger: log.logger,
      metrics,
      readiness: () => Promise.resolve(report),
    });
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(log.text()).toContain('"msg":"ops server listening"');

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });

    let ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as ReadinessReport).ready).toBe(true);

    report = {
      ready: false,
      reasons: [
        "job sessions has not succeeded since the service started (allowed 240 s)",
      ],
      clickhouse: { ok: true },
      overdue: [
        {
          job: "sessions",
          lastSuccessAt: null,
          overdueAfterMs: 240_000,
          lateByMs: 5,
        },
      ],
      stopping: false,
    };
    ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get("content-type")).toBe("application/json");
    expect(await ready.json()).toEqual(report);

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(
      /^text\/plain; version=0\.0\.4/,
    );
    const e = parsePrometheusText(await res.text());
    expect(
      sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: "sessions",
        table: "sessions",
      }),
    ).toBe(3);

    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    const post = await fetch(`${server.url}/metrics`, {
      method: "POST",
      body: "x",
    });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    const head = await fetch(`${server.url}/healthz`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("redacts secrets from the readiness reasons", async () => {
    const secret = "ch-password-123456";
    server = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      logger: memoryLogger().logger,
      metrics: new Metrics({ processMetrics: false }),
      scrub: scrubber([secret]),
      readiness: () =>
        checkReadiness({
          ping: () =>
            Promise.reject(
              new Error(`authentication failed for default:${secret}`),
            ),
          jobs: () => [],
          startedAtMs: Date.now(),
          stopping: () => false,
        }),
    });
    const res = await fetch(`${server.url}/readyz`);
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(text).not.toContain(secret);
    expect(text).toContain("[REDACTED]");
  });

  it("closes once, dropping idle keep-alive connections, and reports a port in use", async () => {
    const log = memoryLogger();
    const first = await startOpsServer({
      host: "127.0.0.1",
      port: 0,
      logger: log.logger,
      metrics: new Metrics({ processMetrics: false }),
      readiness: () =>
        Promise.resolve({
          ready: true,
          reasons: [],
          clickhouse: { ok: true },
          overdue: [],
          stopping: false,
        }),
    });
    server = first;
    await (await fetch(`${first.url}/healthz`)).text();
    await expect(
      startOpsServer({
        host: "127.0.0.1",
        port: first.port,
        logger: log.logger,
        metrics: new Metrics({ processMetrics: false }),
        readiness: () => Promise.reject(new Error("unused")),
      }),
    ).rejects.toThrow(/EADDRINUSE/);
    const closing = first.close();
    expect(first.close()).toBe(closing);
    await closing;
    await expect(fetch(`${first.url}/healthz`)).rejects.toThrow();
  });
});
