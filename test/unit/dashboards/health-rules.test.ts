// The exporter-health rules the alert SQL and the panels copy from the code: which checkpoint
// streams are live (a backfill's never is), and which recorded run errors are a refused key. Each
// copy must be the owner's text, and the owner's text must mean what the code means.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  classifyFailure,
  KEY_REFUSED_REGEX,
  keyRefusedIn,
} from "../../../src/api/errors.js";
import {
  CONNECT_CODES,
  HTTP_STATUS_OF_CODE,
} from "../../../src/api/connect-codes.js";
import {
  BACKFILL_STREAM_REGEX,
  backfillStream,
  detectionStream,
  isLiveStream,
  parseBackfillStream,
  ROLLUPS_KEYS_STREAM,
  SESSIONS_STREAM,
  ENTITY_STREAMS,
} from "../../../src/pipeline/names.js";
import { STREAM_JOB_SQL } from "../../../src/warehouse/bookkeeping.js";
import { planJobs } from "../../../src/scheduler/jobs.js";
import { loadConfig } from "../../../src/config/index.js";
import { clickhouseQuery, loadAlertRules } from "../../helpers/alerts.js";
import { REPO_ROOT } from "../../helpers/dashboards.js";

const rule = (uid: string) => {
  const found = loadAlertRules().find((r) => r.rule.uid === uid);
  if (!found) throw new Error(`no alert rule ${uid}`);
  return clickhouseQuery(found.rule).model.rawSql;
};

function lagPanelSql(): string {
  const board = JSON.parse(
    readFileSync(join(REPO_ROOT, "dashboards/exporter-health.json"), "utf8"),
  ) as {
    panels: { title: string; targets?: { rawSql?: string }[] }[];
  };
  const panel = board.panels.find((p) => p.title === "Lag per stream");
  return panel?.targets?.[0]?.rawSql ?? "";
}

describe("live streams", () => {
  const backfills = [
    backfillStream(SESSIONS_STREAM, 1790812800000, 1793491200000),
    backfillStream("aggregations.tech", 0, 86_400_000),
  ];
  const live = [
    SESSIONS_STREAM,
    "aggregations.tech",
    "aggregations.backfill_audit",
    ...ENTITY_STREAMS,
    detectionStream("new-client-address"),
    ROLLUPS_KEYS_STREAM,
  ];

  it("are every checkpoint stream but a backfill's, as the backfill names are parsed", () => {
    for (const name of backfills) {
      expect(isLiveStream(name), name).toBe(false);
      expect(
        parseBackfillStream(name.split(".backfill.")[0] ?? "", name),
      ).toBeDefined();
    }
    for (const name of live) expect(isLiveStream(name), name).toBe(true);
  });

  it("the lag alert and the Lag per stream panel leave backfills out by the same text", () => {
    const clause = `NOT match(stream, '${BACKFILL_STREAM_REGEX}')`;
    expect(rule("sessionhouse-exporter-lag")).toContain(clause);
    expect(lagPanelSql()).toContain(clause);
  });
});

describe("a stream's schedule", () => {
  it("the lag alert and the Lag per stream panel find a stream's job by the same text and subtract its period", () => {
    for (const sql of [rule("sessionhouse-exporter-lag"), lagPanelSql()]) {
      expect(sql).toContain(`${STREAM_JOB_SQL} AS job`);
      expect(sql).toContain("argMax(period_seconds, recorded_at)");
      expect(sql).toContain("- s.period_seconds");
    }
  });

  it("every live stream's job is one `run` schedules, by that rule", () => {
    // STREAM_JOB_SQL in words: the job of the stream's name, else the job its first part names.
    const plans = planJobs(
      loadConfig({
        env: {
          SESSIONHOUSE_API_URL: "https://cp.example.com",
          SESSIONHOUSE_API_KEY: "k-123456789abcdef",
        },
      }),
      { includeDisabled: true },
    );
    const jobs = new Set(plans.map((p) => p.name));
    const jobOf = (stream: string) =>
      jobs.has(stream) ? stream : stream.split(".")[0];
    for (const p of plans.filter((p) => p.stream))
      expect(jobOf(p.stream ?? ""), p.name).toBe(p.name);
    expect(jobOf(detectionStream("a.b"))).toBe("detections");
    expect(jobOf(ROLLUPS_KEYS_STREAM)).toBe("rollups");
  });
});

describe("a refused key in a run's error", () => {
  const error = (code: string, httpStatus: number) =>
    new ApiError({
      code: code as ApiError["code"],
      httpStatus,
      procedure: "SessionsService/ListSessionsV2",
      message: "invalid API key",
    });

  it("is recognised for exactly the codes the API client judges refused, as answered and behind a proxy", () => {
    const cases = [
      ...CONNECT_CODES.map((c) => error(c, HTTP_STATUS_OF_CODE[c])),
      ...[401, 403, 404, 429, 500, 503].map((s) => error(`HTTP_${s}`, s)),
      error("NETWORK", 0),
      error("TIMEOUT", 0),
    ];
    for (const e of cases) {
      const refused = classifyFailure(e) === "refused";
      // As a run records it: the message, behind whatever the job wrapped it in.
      expect(keyRefusedIn(`users: ${e.message}`), e.message).toBe(refused);
    }
    expect(keyRefusedIn(error("unauthenticated", 401).message)).toBe(true);
    expect(keyRefusedIn(error("HTTP_403", 403).message)).toBe(true);
    expect(keyRefusedIn("the job was unauthenticated: no")).toBe(false);
  });

  it("the API key refused alert reads runs with the same text", () => {
    expect(rule("sessionhouse-api-key-refused")).toContain(
      `match(error, '${KEY_REFUSED_REGEX}')`,
    );
    expect(KEY_REFUSED_REGEX).not.toMatch(/[\\$']/);
    expect(BACKFILL_STREAM_REGEX).not.toMatch(/[\\$']/);
  });
});
