// The re-read of open sessions against the simulator over HTTP and a real engine: a session that
// GetSession answers `not_found` for three times in a row is marked vanished, keeps its stored
// row and is not asked for again; a successful read in between starts the count again; a status
// the exporter does not know is stored as it comes and followed until it is too old.
//
// A small proxy in front of the simulators records every GetSession's session id, can send the
// requests to a fault-free twin (same seed, same clock), and can rewrite answers.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { Metrics } from "../../../src/ops/metrics.js";
import { refreshOpenSessions } from "../../../src/pipeline/open-sessions.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SimClock, type Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { fromChTime } from "../../../src/warehouse/format.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";
import { parsePrometheusText, sampleValue } from "../../helpers/prom-text.js";
import { SESSIONS_JOB, OPEN_REFRESH_JOB } from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const FROM = NOON - 6 * HOUR;
const FAULTS = { rates: { vanishedSession: 0.3 }, seed: 3 };

interface SessionProxy {
  url: string;
  /** Session ids of the GetSession requests forwarded so far. */
  asked: string[];
  upstream: string;
  /** Rewrites an answer's body before it is sent on. */
  rewrite: ((path: string, body: string) => string) | undefined;
  close(): Promise<void>;
}

async function sessionProxy(upstream: string): Promise<SessionProxy> {
  const proxy: SessionProxy = {
    url: "",
    asked: [],
    upstream,
    rewrite: undefined,
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      if (path.endsWith("/GetSession"))
        proxy.asked.push((JSON.parse(body) as { sessionId: string }).sessionId);
      void (async () => {
        try {
          const answer = await fetch(proxy.upstream + path, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-api-key": String(req.headers["x-api-key"]),
            },
            body,
          });
          const text = await answer.text();
          res.writeHead(answer.status, {
            "content-type":
              answer.headers.get("content-type") ?? "application/json",
          });
          res.end(proxy.rewrite ? proxy.rewrite(path, text) : text);
        } catch {
          res.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}

/** One clock for both simulators, so the twin serves the same sessions in the same states. */
const clock = SimClock.fixed(NOON);
let sim: Simulator;
let twin: Simulator;

beforeAll(async () => {
  [sim, twin] = await Promise.all([
    testSimulator({ clock, faults: FAULTS }),
    testSimulator({ clock }),
  ]);
});
afterAll(async () => {
  await sim.close();
  await twin.close();
});

interface Fixture {
  config: Config;
  w: Warehouse;
  proxy: SessionProxy;
  metrics: Metrics;
  log: ReturnType<typeof memoryLogger>;
  deps: ReturnType<typeof runDeps>;
  refresh(nowMs?: number): Promise<number>;
  close(): Promise<void>;
}

/** Six hours of sessions stored, nothing re-read yet. */
async function fixture(env: Record<string, string> = {}): Promise<Fixture> {
  const proxy = await sessionProxy(sim.url);
  const { config, w } = await simulatorWarehouse(proxy.url, {
    SESSIONHOUSE_PAGE_SIZE: "500",
    SESSIONHOUSE_WINDOW: "6h",
    ...env,
  });
  const metrics = new Metrics({ processMetrics: false });
  const log = memoryLogger([], "info");
  const deps = runDeps(config, w, { observer: metrics, logger: log.logger });
  await run(deps, SESSIONS_JOB, (ctx) =>
    syncSessions(ctx, {
      fromMs: FROM,
      toMs: NOON,
      nowMs: NOON,
      skipOpenRefresh: true,
    }),
  );
  return {
    config,
    w,
    proxy,
    metrics,
    log,
    deps,
    refresh: (nowMs = NOON) =>
      run(deps, OPEN_REFRESH_JOB, (ctx) =>
        refreshOpenSessions(ctx, { beforeMs: NOON, nowMs }),
      ),
    close: async () => {
      await deps.api.close();
      await proxy.close();
      await w.close();
    },
  };
}

interface PollRow {
  session_id: string;
  misses: number;
  vanished: boolean;
  last_error: string;
}

async function polls(w: Warehouse): Promise<Map<string, PollRow>> {
  const rows = await select<PollRow>(
    w,
    "SELECT session_id, misses, vanished, last_error FROM {db}.session_polls FINAL",
  );
  return new Map(rows.map((r) => [r.session_id, r]));
}

interface StoredRow {
  id: string;
  session_status: string;
  start_time: string;
  fetched_at: string;
  raw: string;
}

async function storedRows(w: Warehouse): Promise<Map<string, StoredRow>> {
  const rows = await select<StoredRow>(
    w,
    "SELECT id, session_status, start_time, fetched_at, raw FROM {db}.sessions FINAL",
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/** The vanished sessions of the fixture's range: open now, and GetSession says not_found. */
function vanishedIds(): string[] {
  const ids = sim
    .faultedSessions(FROM, NOON)
    .filter((f) => f.kind === "vanishedSession")
    .map((f) => f.sessionId);
  expect(ids.length).toBeGreaterThan(2);
  return ids.sort();
}

describe("re-read of open sessions", () => {
  it("marks a session vanished after three not_found answers in a row and never asks for it again", async () => {
    const f = await fixture();
    try {
      const vanished = vanishedIds();
      const before = await storedRows(f.w);
      const open = [...before.values()].filter(
        (r) => r.session_status !== "completed",
      );
      for (const id of vanished)
        expect(before.get(id)?.session_status, id).toMatch(/^(active|idle)$/);

      for (let round = 1; round <= 3; round++) {
        f.proxy.asked.length = 0;
        const answered = await f.refresh();
        // Every open session is asked for once, the vanished ones too.
        expect(f.proxy.asked.sort()).toEqual(open.map((r) => r.id).sort());
        expect(answered).toBe(open.length - vanished.length);
        const state = await polls(f.w);
        expect([...state.keys()].sort()).toEqual(vanished);
        for (const id of vanished)
          expect(state.get(id), id).toMatchObject({
            misses: round,
            vanished: round === 3,
            last_error: "not_found",
          });
      }

      // The fourth re-read leaves the vanished sessions out and asks for every other one.
      f.proxy.asked.length = 0;
      await f.refresh();
      const asked = new Set(f.proxy.asked);
      expect(asked.size).toBe(open.length - vanished.length);
      for (const id of vanished) expect(asked.has(id), id).toBe(false);

      // Their rows stay as the listing stored them.
      const after = await storedRows(f.w);
      for (const id of vanished) {
        expect(after.get(id)?.raw).toBe(before.get(id)?.raw);
        expect(after.get(id)?.fetched_at).toBe(before.get(id)?.fetched_at);
      }
      const e = parsePrometheusText(await f.metrics.text());
      expect(
        sampleValue(e, "sessionhouse_sessions_vanished_total", {
          job: OPEN_REFRESH_JOB,
        }),
      ).toBe(vanished.length);
      const warnings = f.log.lines
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => String(l.msg).startsWith("session vanished"));
      expect(warnings.map((l) => l.sessionId).sort()).toEqual(vanished);
      expect(warnings.every((l) => l.level === 40)).toBe(true);
    } finally {
      await f.close();
    }
  });

  it("starts the count again after a successful read", async () => {
    const f = await fixture();
    try {
      const vanished = vanishedIds();
      await f.refresh();
      await f.refresh();
      expect((await polls(f.w)).get(vanished[0] ?? "")?.misses).toBe(2);

      // The service answers again (the fault-free twin): misses back to 0, the rows re-read.
      f.proxy.upstream = twin.url;
      await f.refresh();
      f.proxy.upstream = sim.url;
      let state = await polls(f.w);
      for (const id of vanished)
        expect(state.get(id), id).toMatchObject({
          misses: 0,
          vanished: false,
          last_error: "",
        });

      await f.refresh();
      await f.refresh();
      state = await polls(f.w);
      for (const id of vanished)
        expect(state.get(id), id).toMatchObject({ misses: 2, vanished: false });
      f.proxy.asked.length = 0;
      await f.refresh();
      expect(f.proxy.asked).toEqual(expect.arrayContaining(vanished));
      state = await polls(f.w);
      for (const id of vanished)
        expect(state.get(id), id).toMatchObject({ misses: 3, vanished: true });
      const e = parsePrometheusText(await f.metrics.text());
      expect(
        sampleValue(e, "sessionhouse_sessions_vanished_total", {
          job: OPEN_REFRESH_JOB,
        }),
      ).toBe(vanished.length);
    } finally {
      await f.close();
    }
  });

  it("stores an unknown status as it comes and follows it until it is older than unknownStatusPollMs", async () => {
    const f = await fixture({ SESSIONHOUSE_UNKNOWN_STATUS_POLL: "1d" });
    try {
      const vanished = new Set(vanishedIds());
      const before = await storedRows(f.w);
      // An open session the service starts to report in a status the exporter does not know.
      const [chosen, other] = [...before.values()]
        .filter((r) => r.session_status === "active" && !vanished.has(r.id))
        .sort((a, b) => a.start_time.localeCompare(b.start_time));
      expect(chosen && other).toBeTruthy();
      const id = chosen?.id ?? "";
      f.proxy.rewrite = (path, body) =>
        path.endsWith("/GetSession") && body.includes(`"id":"${id}"`)
          ? body.replace('"sessionStatus":"active"', '"sessionStatus":"paused"')
          : body;

      await f.refresh();
      let row = (await storedRows(f.w)).get(id);
      expect(row?.session_status).toBe("paused");
      expect(JSON.parse(row?.raw ?? "{}")).toMatchObject({
        sessionStatus: "paused",
      });

      // Within a day of its start it is asked for like an open session.
      f.proxy.asked.length = 0;
      await f.refresh(NOON);
      expect(f.proxy.asked).toContain(id);
      row = (await storedRows(f.w)).get(id);
      expect(row?.session_status).toBe("paused");

      // A day after its start it is no longer asked for; open sessions as old still are.
      const startMs = fromChTime(chosen?.start_time ?? "");
      f.proxy.asked.length = 0;
      await f.refresh(startMs + 24 * HOUR + 1000);
      expect(f.proxy.asked).not.toContain(id);
      expect(f.proxy.asked).toContain(other?.id);
      expect((await storedRows(f.w)).get(id)?.session_status).toBe("paused");
    } finally {
      await f.close();
    }
  });
});
