// The metrics class on its own: every observer hook lands in the right series, the text parses
// as Prometheus exposition, the lag comes from the checkpoints at scrape time.
import { describe, expect, it } from "vitest";
import { Metrics } from "../../../src/ops/metrics.js";
import {
  parsePrometheusText,
  sampleValue,
  sumSamples,
} from "../../helpers/prom-text.js";

const NOW = Date.UTC(2026, 10, 16, 12, 0, 0);

describe("Metrics", () => {
  it("counts rows, pages, dead letters, runs, API requests, retries and skipped ticks", async () => {
    const m = new Metrics({ processMetrics: false, nowMs: () => NOW });
    m.declareJobs(["sessions", "aggregations.logs_by_technology"]);
    m.onRows({ job: "sessions", table: "sessions", rows: 120 });
    m.onRows({ job: "sessions", table: "sessions", rows: 30 });
    m.onDeadLetters({ job: "sessions", count: 2 });
    m.onRunEnd({
      job: "sessions",
      status: "succeeded",
      ms: 2_500,
      counters: { pages: 7, rowsInserted: 150, deadLetters: 2, retries: 3 },
    });
    m.onRunEnd({
      job: "sessions",
      status: "aborted",
      ms: 100,
      counters: { pages: 1, rowsInserted: 0, deadLetters: 0, retries: 0 },
    });
    m.onAttempt({
      procedure: "SessionsService/ListSessionsV2",
      result: "ok",
      ms: 40,
    });
    m.onAttempt({
      procedure: "SessionsService/ListSessionsV2",
      result: "unavailable",
      ms: 3,
    });
    m.onRetry({
      procedure: "SessionsService/ListSessionsV2",
      code: "unavailable",
      waitMs: 500,
    });
    m.onTickSkipped({ job: "sessions", reason: "running" });
    m.onRunDeadline({ job: "sessions" });
    m.onJobState({ job: "sessions", running: true });
    m.onJobSuccess({ job: "sessions", atMs: NOW });

    const text = await m.text();
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const e = parsePrometheusText(text);
    expect(
      sampleValue(e, "sessionhouse_rows_inserted_total", {
        job: "sessions",
        table: "sessions",
      }),
    ).toBe(150);
    expect(
      sampleValue(e, "sessionhouse_pages_total", { job: "sessions" }),
    ).toBe(8);
    expect(
      sampleValue(e, "sessionhouse_pages_total", {
        job: "aggregations.logs_by_technology",
      }),
    ).toBe(0);
    expect(
      sampleValue(e, "sessionhouse_dead_letters_total", { job: "sessions" }),
    ).toBe(2);
    expect(
      sampleValue(e, "sessionhouse_run_retries_total", { job: "sessions" }),
    ).toBe(3);
    expect(
      sampleValue(e, "sessionhouse_runs_total", {
        job: "sessions",
        status: "succeeded",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_runs_total", {
        job: "sessions",
        status: "aborted",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_run_duration_seconds_count", {
        job: "sessions",
        status: "succeeded",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_run_duration_seconds_sum", {
        job: "sessions",
        status: "succeeded",
      }),
    ).toBe(2.5);
    expect(
      sampleValue(e, "sessionhouse_api_requests_total", {
        procedure: "SessionsService/ListSessionsV2",
        result: "ok",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_api_requests_total", {
        procedure: "SessionsService/ListSessionsV2",
        result: "unavailable",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_api_request_duration_seconds_count", {
        procedure: "SessionsService/ListSessionsV2",
      }),
    ).toBe(2);
    expect(
      sampleValue(e, "sessionhouse_api_request_duration_seconds_bucket", {
        procedure: "SessionsService/ListSessionsV2",
        le: "0.05",
      }),
    ).toBe(2);
    expect(
      sampleValue(e, "sessionhouse_api_retries_total", {
        procedure: "SessionsService/ListSessionsV2",
        code: "unavailable",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_scheduler_skipped_ticks_total", {
        job: "sessions",
        reason: "running",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_scheduler_skipped_ticks_total", {
        job: "sessions",
        reason: "waiting",
      }),
    ).toBe(0);
    expect(
      sampleValue(e, "sessionhouse_run_deadline_exceeded_total", {
        job: "sessions",
      }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_job_running", { job: "sessions" }),
    ).toBe(1);
    expect(
      sampleValue(e, "sessionhouse_job_last_success_timestamp_seconds", {
        job: "sessions",
      }),
    ).toBe(NOW / 1000);
    expect(e.types.get("sessionhouse_api_request_duration_seconds")).toBe(
      "histogram",
    );
    expect(e.types.get("sessionhouse_stream_lag_seconds")).toBe("gauge");
  });

  it("counts vanished sessions, sessions reconciled and windows that differ", async () => {
    const m = new Metrics({ processMetrics: false, nowMs: () => NOW });
    m.onSessionsVanished({ job: "sessions.refresh", count: 2 });
    m.onSessionsVanished({ job: "sessions.refresh", count: 1 });
    m.onReconcileMissing({ job: "sessions.reconcile", count: 7 });
    m.onReconcileWindowsDiffering({ job: "sessions.reconcile", count: 1 });
    m.onReconcileWindowsDiffering({ job: "sessions.reconcile", count: 1 });
    const e = parsePrometheusText(await m.text());
    expect(
      sampleValue(e, "sessionhouse_sessions_vanished_total", {
        job: "sessions.refresh",
      }),
    ).toBe(3);
    expect(
      sampleValue(e, "sessionhouse_reconcile_missing_total", {
        job: "sessions.reconcile",
      }),
    ).toBe(7);
    expect(
      sampleValue(e, "sessionhouse_reconcile_windows_differing_total", {
        job: "sessions.reconcile",
      }),
    ).toBe(2);
  });

  it("computes each stream's lag at scrape time from the checkpoints", async () => {
    let now = NOW;
    const m = new Metrics({ processMetrics: false, nowMs: () => now });
    let reads = 0;
    m.watchCheckpoints(() => {
      reads++;
      return Promise.resolve([
        { stream: "sessions", positionMs: NOW - 90_000 },
        {
          stream: "aggregations.logs_by_technology",
          positionMs: NOW - 3_600_000,
        },
        {
          stream: "inventory",
          positionMs: NOW - 20 * 3_600_000,
          schedulePeriodMs: 86_400_000,
        },
      ]);
    });
    let e = parsePrometheusText(await m.text());
    // The period a stream may lag with nothing wrong, where the process knows its schedule.
    expect(
      sampleValue(e, "sessionhouse_stream_schedule_period_seconds", {
        stream: "inventory",
      }),
    ).toBe(86_400);
    expect(
      sampleValue(e, "sessionhouse_stream_schedule_period_seconds", {
        stream: "sessions",
      }),
    ).toBeUndefined();
    expect(
      sampleValue(e, "sessionhouse_stream_lag_seconds", { stream: "sessions" }),
    ).toBe(90);
    expect(
      sampleValue(e, "sessionhouse_stream_lag_seconds", {
        stream: "aggregations.logs_by_technology",
      }),
    ).toBe(3600);
    expect(
      sampleValue(e, "sessionhouse_stream_checkpoint_timestamp_seconds", {
        stream: "sessions",
      }),
    ).toBe((NOW - 90_000) / 1000);
    expect(sampleValue(e, "sessionhouse_clickhouse_up")).toBe(1);
    // One read of the checkpoints serves the gauges of one scrape.
    expect(reads).toBe(1);

    now += 60_000;
    e = parsePrometheusText(await m.text());
    expect(
      sampleValue(e, "sessionhouse_stream_lag_seconds", { stream: "sessions" }),
    ).toBe(150);
    expect(reads).toBe(2);
  });

  it("reports ClickHouse down and no stale lag when the checkpoints cannot be read", async () => {
    let fail = false;
    let now = NOW;
    const m = new Metrics({ processMetrics: false, nowMs: () => now });
    m.watchCheckpoints(() =>
      fail
        ? Promise.reject(new Error("connection refused"))
        : Promise.resolve([{ stream: "sessions", positionMs: NOW }]),
    );
    expect(
      sampleValue(
        parsePrometheusText(await m.text()),
        "sessionhouse_stream_lag_seconds",
        { stream: "sessions" },
      ),
    ).toBe(0);
    fail = true;
    now += 10_000;
    const e = parsePrometheusText(await m.text());
    expect(sampleValue(e, "sessionhouse_clickhouse_up")).toBe(0);
    expect(sumSamples(e, "sessionhouse_stream_lag_seconds")).toBe(0);
    expect(
      e.samples.some((s) => s.name === "sessionhouse_stream_lag_seconds"),
    ).toBe(false);
  });

  it("exports the process metrics by default, and each instance has a registry of its own", async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.onRows({ job: "sessions", table: "sessions", rows: 5 });
    const ea = parsePrometheusText(await a.text());
    const eb = parsePrometheusText(await b.text());
    expect(ea.types.has("process_cpu_user_seconds_total")).toBe(true);
    expect(
      sampleValue(ea, "sessionhouse_rows_inserted_total", {
        job: "sessions",
        table: "sessions",
      }),
    ).toBe(5);
    expect(
      sampleValue(eb, "sessionhouse_rows_inserted_total", {
        job: "sessions",
        table: "sessions",
      }),
    ).toBeUndefined();
  });
});
