import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import {
  openWarehouse,
  type Warehouse,
} from "../../../src/warehouse/client.js";
import { fromChTime } from "../../../src/warehouse/format.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  API_KEY,
  expectedSessions,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../../helpers/simulator.js";
import { reusedDatabase, select, testConfig } from "../../helpers/warehouse.js";
import { SESSIONS_JOB, SESSIONS_STREAM } from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
let sim: Simulator;
const db = reusedDatabase();

beforeAll(async () => {
  sim = await testSimulator();
});
afterAll(async () => {
  await db.close();
  await sim.close();
});

/**
 * A fresh, migrated database (one for the file, emptied for each setup: reusedDatabase) and the
 * case's own handle on it, closed by the case.
 */
async function setup(
  env: Record<string, string> = {},
): Promise<{ config: Config; w: Warehouse }> {
  const config = await testConfig(
    {
      SESSIONHOUSE_API_URL: sim.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_MAX_RPS: "1000",
      SESSIONHOUSE_PAGE_SIZE: "150",
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_INITIAL_LOOKBACK: "1d",
      SESSIONHOUSE_LOOKBACK: "1h",
      ...env,
    },
    db.name,
  );
  await db.fresh(config);
  return { config, w: await openWarehouse(config) };
}

interface StoredSession {
  id: string;
  start_time: string;
  end_time: string | null;
  session_status: string;
  user_email: string;
  user_username: string;
  user_groups: string[];
  resource_name: string;
  resource_technology: string;
  parent_session_id: string;
  client_ip_address: string;
  connector_name: string;
  sidecar_name: string;
  raw: string;
}

async function stored(w: Warehouse): Promise<Map<string, StoredSession>> {
  const rows = await select<StoredSession>(
    w,
    `SELECT id, start_time, end_time, session_status, user_email, user_username, user_groups, resource_name,
            resource_technology, parent_session_id, client_ip_address, connector_name, sidecar_name, raw
     FROM {db}.sessions FINAL`,
  );
  return new Map(rows.map((r) => [r.id, r]));
}

describe("sync sessions against the simulator", () => {
  it("fetches several windows at once and still checkpoints them in order, storing the same", async () => {
    const { config, w } = await setup({ SESSIONHOUSE_WINDOW_CONCURRENCY: "4" });
    const checkpoints: number[] = [];
    const deps = runDeps(config, w, {
      observer: { onCheckpoint: (e) => checkpoints.push(e.positionMs) },
    });
    const r = await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs: NOON, skipOpenRefresh: true }),
    );
    expect(r.windows).toBeGreaterThanOrEqual(4);
    const expected = await expectedSessions(sim, NOON - 24 * HOUR, NOON);
    const got = await stored(w);
    expect(got.size).toBe(expected.length);
    for (const e of expected)
      expect(JSON.parse(got.get(e.id as string)?.raw ?? "null")).toEqual(e);
    // One checkpoint per window, each further than the one before.
    expect(checkpoints).toHaveLength(r.windows);
    expect([...checkpoints].sort((a, b) => a - b)).toEqual(checkpoints);
    expect(new Set(checkpoints).size).toBe(checkpoints.length);
    expect((await readCheckpoint(w, SESSIONS_STREAM))?.positionMs).toBe(
      r.endMs,
    );
    await w.close();
  });

  it("stores every simulated session exactly once, with every field right", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    const r = await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs: NOON }),
    );
    expect(r.windows).toBeGreaterThanOrEqual(4);

    const expected = await expectedSessions(sim, NOON - 24 * HOUR, NOON);
    expect(expected.length).toBeGreaterThan(1000);
    const got = await stored(w);
    expect(got.size).toBe(expected.length);
    const [{ n } = { n: 0 }] = await select<{ n: number }>(
      w,
      "SELECT count() AS n FROM {db}.sessions FINAL",
    );
    expect(Number(n)).toBe(expected.length);

    for (const e of expected) {
      const row = got.get(e.id as string);
      expect(row, `session ${String(e.id)}`).toBeDefined();
      if (!row) continue;
      // The raw record is kept exactly as received.
      expect(JSON.parse(row.raw)).toEqual(e);
      expect(fromChTime(row.start_time)).toBe(
        Date.parse(e.startTime as string),
      );
      expect(row.session_status).toBe(e.sessionStatus);
      expect(row.end_time === null ? undefined : fromChTime(row.end_time)).toBe(
        e.endTime ? Date.parse(e.endTime as string) : undefined,
      );
      const user = e.user as Record<string, unknown>;
      const brand = (user.formal ?? {}) as {
        user?: { email?: string; groups?: string[] };
      };
      expect(row.user_username).toBe(user.username ?? "");
      expect(row.user_email).toBe(brand.user?.email ?? "");
      expect(row.user_groups).toEqual(brand.user?.groups ?? []);
      const resource = e.resource as { name: string; technology: string };
      expect(row.resource_name).toBe(resource.name);
      expect(row.resource_technology).toBe(resource.technology);
      expect(row.parent_session_id).toBe(e.parentSessionId ?? "");
      expect(row.client_ip_address).toBe(
        (e.network as { clientIpAddress?: string } | undefined)
          ?.clientIpAddress ?? "",
      );
      expect(row.connector_name).toBe(
        (e.connector as { name?: string } | undefined)?.name ?? "",
      );
      expect(row.sidecar_name).toBe(
        (e.sidecar as { name?: string } | undefined)?.name ?? "",
      );
    }
    // Child sessions point at parents that are stored too.
    const children = [...got.values()].filter(
      (s) => s.parent_session_id !== "",
    );
    expect(children.length).toBeGreaterThan(0);
    expect(
      children.filter((c) => got.has(c.parent_session_id)).length,
    ).toBeGreaterThan(children.length * 0.9);

    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    expect(cp?.positionMs).toBe(NOON);
    await deps.api.close();
    await w.close();
  });

  it("adds nothing visible on a second sync, and updates open sessions that completed", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    await run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs: NOON }));
    const before = await stored(w);
    await run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs: NOON }));
    const again = await stored(w);
    expect(again.size).toBe(before.size);

    const open = [...before.values()].filter(
      (s) => s.session_status !== "completed",
    );
    expect(open.length).toBeGreaterThan(0);
    // Three days later every session open at noon has ended (the longest last three days),
    // including those that started before the lookback and are re-read one by one.
    const later = NOON + 3 * 24 * HOUR + HOUR;
    sim.clock.set(later);
    try {
      const r = await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, { nowMs: later }),
      );
      expect(r.openRefreshed).toBeGreaterThan(0);
      const after = await stored(w);
      for (const s of open) {
        expect(after.get(s.id)?.session_status, s.id).toBe("completed");
        expect(after.get(s.id)?.end_time).not.toBeNull();
      }
      const [{ n } = { n: 0 }] = await select<{ n: number }>(
        w,
        "SELECT count() - uniqExact(id) AS n FROM {db}.sessions FINAL",
      );
      expect(Number(n)).toBe(0);
    } finally {
      sim.clock.set(NOON);
    }
    await deps.api.close();
    await w.close();
  });

  it("resumes a sync killed between pages with nothing lost, and never checkpoints ahead of the data", async () => {
    // Small blocks: many inserts, the second one while pages are still being read.
    const { config, w } = await setup({
      SESSIONHOUSE_INSERT_BATCH_ROWS: "200",
    });
    const abort = new AbortController();
    let inserts = 0;
    const deps = runDeps(config, w, {
      signal: abort.signal,
      observer: {
        onRows: () => {
          inserts++;
          if (inserts === 2) abort.abort(new Error("killed"));
        },
      },
    });
    await expect(
      run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs: NOON })),
    ).rejects.toThrow();
    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    const partial = await stored(w);
    expect(partial.size).toBeGreaterThan(0);
    const expected = await expectedSessions(sim, NOON - 24 * HOUR, NOON);
    expect(partial.size).toBeLessThan(expected.length);
    // Every session before the checkpoint is stored: the checkpoint does not run ahead.
    if (cp) {
      for (const e of expected.filter(
        (s) => Date.parse(s.startTime as string) < cp.positionMs,
      )) {
        expect(partial.has(e.id as string)).toBe(true);
      }
    }
    const [runRow] = await select<{ status: string }>(
      w,
      "SELECT status FROM {db}.runs FINAL ORDER BY started_at DESC LIMIT 1",
    );
    expect(runRow?.status).toBe("aborted");

    const resumed = runDeps(config, w);
    await run(resumed, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs: NOON }),
    );
    const all = await stored(w);
    expect([...all.keys()].sort()).toEqual(
      expected.map((e) => e.id as string).sort(),
    );
    await deps.api.close();
    await resumed.api.close();
    await w.close();
  });

  it("fills blocks across windows, and moves a window's checkpoint only once its rows are stored", async () => {
    const expected = await expectedSessions(sim, NOON - 24 * HOUR, NOON);
    const startsBefore = (ms: number) =>
      expected.filter((e) => Date.parse(e.startTime as string) < ms).length;
    for (const batchRows of ["100000", "200"]) {
      const { config, w } = await setup({
        SESSIONHOUSE_INSERT_BATCH_ROWS: batchRows,
      });
      let stored = 0;
      let inserts = 0;
      const progress: { positionMs: number; stored: number }[] = [];
      const deps = runDeps(config, w, {
        observer: {
          onRows: ({ table, rows }) => {
            if (table !== "sessions") return;
            inserts++;
            stored += rows;
          },
          onProgress: ({ positionMs }) =>
            progress.push({ positionMs: positionMs ?? -1, stored }),
        },
      });
      const r = await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, { nowMs: NOON, skipOpenRefresh: true }),
      );
      expect(r.windows).toBe(4);
      expect(r.rows).toBe(expected.length);
      // One day of sessions is one block (or its two halves), not one block a window.
      if (batchRows === "100000") expect(inserts).toBeLessThan(r.windows);
      else expect(inserts).toBeGreaterThan(r.windows);
      expect(progress.map((p) => p.positionMs)).toEqual(
        [3, 2, 1, 0].map((k) => NOON - k * 6 * HOUR),
      );
      for (const p of progress)
        expect(p.stored).toBeGreaterThanOrEqual(startsBefore(p.positionMs));
      expect((await readCheckpoint(w, SESSIONS_STREAM))?.positionMs).toBe(NOON);
      await deps.api.close();
      await w.close();
    }
  });

  it("backfills an explicit range into its own checkpoint", async () => {
    const { config, w } = await setup();
    const deps = runDeps(config, w);
    const from = NOON - 5 * 24 * HOUR;
    const to = NOON - 4 * 24 * HOUR;
    const r = await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, {
        fromMs: from,
        toMs: to,
        nowMs: NOON,
        skipOpenRefresh: true,
      }),
    );
    const expected = await expectedSessions(sim, from, to);
    expect(r.rows).toBe(expected.length);
    expect((await stored(w)).size).toBe(expected.length);
    expect(await readCheckpoint(w, SESSIONS_STREAM)).toBeUndefined();
    await deps.api.close();
    await w.close();
  });

  it("stops with a clear error when the service repeats a cursor", async () => {
    // A service whose paging loops: every page hands back the same cursor.
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            sessions: [{ id: "looping-session" }],
            listMetadata: { nextCursor: "same-cursor", count: 1 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) =>
      server.listen(0, "127.0.0.1", resolve),
    );
    const { config, w } = await setup({
      SESSIONHOUSE_API_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const deps = runDeps(config, w);
    const err = await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs: NOON }),
    ).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("CURSOR_REPEATED");
    expect((err as Error).message).toMatch(/cursor it had already returned/);
    // The first sync fixed where the stream starts, and covers nothing yet.
    const cp = await readCheckpoint(w, SESSIONS_STREAM);
    expect(cp?.positionMs).toBe(cp?.detail.coversFromMs);
    expect(cp?.positionMs).toBeLessThan(NOON);
    await deps.api.close();
    await w.close();
    server.close();
  });

  it("never writes the API key into the logs", async () => {
    const { config, w } = await setup({
      SESSIONHOUSE_API_URL: `${sim.url}/`,
      SESSIONHOUSE_LOG_LEVEL: "trace",
    });
    const mem = memoryLogger([API_KEY], "trace");
    const deps = runDeps(config, w, { logger: mem.logger });
    deps.logger.info({ config }, "configuration");
    await run(deps, SESSIONS_JOB, (ctx) => syncSessions(ctx, { nowMs: NOON }));
    // A refused key produces an error that is logged too.
    const bad = runDeps(
      { ...config, api: { ...config.api, apiKey: `${API_KEY}-wrong` } },
      w,
      { logger: mem.logger },
    );
    const err = await run(bad, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, { nowMs: NOON }),
    ).catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe("unauthenticated");
    expect(mem.lines.length).toBeGreaterThan(3);
    expect(mem.text()).not.toContain(API_KEY);
    expect(mem.text()).toContain("[REDACTED]");
    await deps.api.close();
    await bad.api.close();
    await w.close();
  });
});
