// Faults on the ClickHouse side, injected around the real engine: an insert whose acknowledgement
// is lost is retried with the same deduplication token and stored once; a ClickHouse that goes
// down fails the run after its retries with a clear error, leaves the checkpoint where the data
// is, and the next run resumes with nothing lost or doubled.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { ClickHouseClient } from "@clickhouse/client";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { insertLines } from "../../../src/warehouse/insert.js";
import {
  NOON,
  run,
  runDeps,
  testSimulator,
  simulatorWarehouse,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";
import {
  readSessions,
  sessionDifferences,
  storedSessions,
  type WireRecord,
} from "../../helpers/expected.js";
import {
  backfillStream,
  SESSIONS_JOB,
  SESSIONS_STREAM,
} from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const FROM = NOON - 12 * HOUR;
let sim: Simulator;
let expected: Map<string, WireRecord>;

beforeAll(async () => {
  sim = await testSimulator();
  expected = await readSessions(sim, FROM, NOON);
});
afterAll(async () => {
  await sim.close();
});

/** The sessions job over the twelve hours before noon. */
const backfill = (deps: ReturnType<typeof runDeps>) =>
  run(deps, SESSIONS_JOB, (ctx) =>
    syncSessions(ctx, {
      fromMs: FROM,
      toMs: NOON,
      nowMs: NOON,
      skipOpenRefresh: true,
    }),
  );

async function setup(): Promise<{ config: Config; w: Warehouse }> {
  return simulatorWarehouse(sim.url, {
    SESSIONHOUSE_PAGE_SIZE: "200",
    SESSIONHOUSE_WINDOW: "2h",
  });
}

interface InsertAttempt {
  table: string;
  token: string;
}

/**
 * The real warehouse, with `fault` deciding for each INSERT whether it fails before reaching
 * ClickHouse ("before"), after it was stored ("after": the acknowledgement is lost), or not.
 */
function faulty(
  w: Warehouse,
  fault: (a: InsertAttempt, n: number) => "before" | "after" | undefined,
): {
  w: Warehouse;
  attempts: InsertAttempt[];
  /** The most inserts into `sessions` that were under way at once. */
  mostAtOnce: () => number;
} {
  const attempts: InsertAttempt[] = [];
  let atOnce = 0;
  let most = 0;
  const wrap =
    (c: ClickHouseClient, method: "command" | "exec") =>
    async (params: {
      query: string;
      clickhouse_settings?: Record<string, unknown>;
    }): Promise<unknown> => {
      const table = /^INSERT INTO `[^`]+`\.`([^`]+)`/.exec(params.query)?.[1];
      const real = (c[method] as (p: unknown) => Promise<unknown>).bind(c);
      if (!table) return real(params);
      const attempt = {
        table,
        token: String(params.clickhouse_settings?.insert_deduplication_token),
      };
      attempts.push(attempt);
      const what = fault(attempt, attempts.length);
      const down = Object.assign(
        new Error("connect ECONNREFUSED 127.0.0.1:8123"),
        { code: "ECONNREFUSED" },
      );
      if (what === "before") throw down;
      const sessions = table === "sessions";
      if (sessions) most = Math.max(most, ++atOnce);
      const result = await real(params).finally(() => {
        if (sessions) atOnce--;
      });
      if (what === "after")
        throw Object.assign(new Error("socket hang up"), {
          code: "ECONNRESET",
        });
      return result;
    };
  // Every client of the warehouse: inserts may go through the insert clients.
  const faultyClient = (c: ClickHouseClient) =>
    new Proxy(c, {
      get(target, prop, receiver) {
        if (prop === "command" || prop === "exec") return wrap(c, prop);
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  const faulted: Warehouse = {
    ...w,
    client: faultyClient(w.client),
    ...(w.insertClients
      ? { insertClients: w.insertClients.map(faultyClient) }
      : {}),
  };
  return { w: faulted, attempts, mostAtOnce: () => most };
}

describe("an insert that fails", () => {
  it("is retried with the same deduplication token and stored once, even when the first try was stored", async () => {
    const { config, w } = await setup();
    // No background merge may hide a second copy: what is counted is what was written.
    await w.client.command({
      query: `SYSTEM STOP MERGES \`${w.database}\`.sessions`,
    });
    let lost = 0;
    const f = faulty(w, (a) =>
      a.table === "sessions" && lost++ < 2 ? "after" : undefined,
    );
    const deps = runDeps(config, f.w);
    try {
      await backfill(deps);
      const sessionsInserts = f.attempts.filter((a) => a.table === "sessions");
      // The first block was sent three times (twice its acknowledgement was lost), with one token.
      expect(sessionsInserts[0]?.token).toBe(sessionsInserts[1]?.token);
      expect(sessionsInserts[1]?.token).toBe(sessionsInserts[2]?.token);
      expect(new Set(sessionsInserts.map((a) => a.token)).size).toBe(
        sessionsInserts.length - 2,
      );
      const [raw] = await select<{ n: string; ids: string }>(
        w,
        "SELECT count() AS n, uniqExact(id) AS ids FROM {db}.sessions",
      );
      expect(Number(raw?.n)).toBe(expected.size);
      expect(Number(raw?.ids)).toBe(expected.size);
      const [r] = await select<{ retries: string; status: string }>(
        w,
        "SELECT retries, status FROM {db}.runs FINAL",
      );
      expect({ retries: Number(r?.retries), status: r?.status }).toEqual({
        retries: 2,
        status: "succeeded",
      });

      // The same block sent again later (a retry after a crash) is still not stored twice.
      const [block] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions",
      );
      const lines = [
        JSON.stringify({
          id: "probe",
          start_time: "2026-11-16 10:00:00.000",
          raw: "{}",
          fetched_at: "2026-11-16 12:00:00.000",
          version: 1,
        }),
      ];
      await insertLines(w, "sessions", lines, { retries: 0 });
      await insertLines(w, "sessions", lines, { retries: 0 });
      const [after] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions",
      );
      expect(Number(after?.n)).toBe(Number(block?.n) + 1);
      // The control: the same rows under another token are stored again, so the token is what
      // kept the retries above from doubling the block.
      for (const token of ["control-a", "control-b"]) {
        await w.client.insert({
          table: `\`${w.database}\`.sessions`,
          values: [JSON.parse(lines[0] as string) as object],
          format: "JSONEachRow",
          clickhouse_settings: { insert_deduplication_token: token },
        });
      }
      const [control] = await select<{ n: string }>(
        w,
        "SELECT count() AS n FROM {db}.sessions",
      );
      expect(Number(control?.n)).toBe(Number(block?.n) + 3);
    } finally {
      await w.client.command({
        query: `SYSTEM START MERGES \`${w.database}\`.sessions`,
      });
      await deps.api.close();
      await w.close();
    }
  });
});

describe("ClickHouse down in the middle of a run", () => {
  it("fails the run after its retries with a clear error; the checkpoint stays where the data is; the next run resumes", async () => {
    const { config, w } = await setup();
    const stream = backfillStream(SESSIONS_STREAM, FROM, NOON);
    let checkpoints = 0;
    // Up after two windows are checkpointed, down for good from then on.
    const f = faulty(w, (a) => {
      if (checkpoints >= 2) return "before";
      if (a.table === "checkpoints") checkpoints++;
      return undefined;
    });
    const fast = {
      ...config,
      clickhouse: { ...config.clickhouse, insertRetries: 2 },
    };
    const deps = runDeps(fast, f.w);
    try {
      const err = await backfill(deps).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "INSERT_FAILED" });
      expect((err as Error).message).toMatch(
        /^insert into \w+ failed: connect ECONNREFUSED/,
      );
      // Each failed insert was tried three times: once and two retries.
      const failedTokens = f.attempts.slice(-3).map((a) => a.token);
      expect(new Set(failedTokens).size).toBe(1);

      const cp = await readCheckpoint(w, stream);
      expect(cp?.positionMs).toBe(FROM + 2 * 2 * HOUR);
      const { rows } = await storedSessions(w);
      const before = [...expected.values()].filter(
        (s) => Date.parse(s.startTime as string) < (cp?.positionMs ?? 0),
      );
      expect(before.filter((s) => !rows.has(s.id as string))).toEqual([]);

      // ClickHouse is back: the next run resumes from the checkpoint and completes.
      const again = runDeps(config, w);
      const r = await backfill(again);
      expect(r.startMs).toBe(cp?.positionMs);
      await again.api.close();
      const all = await storedSessions(w);
      expect(all.finalRows).toBe(all.rows.size);
      expect(sessionDifferences(expected, all.rows, new Set())).toEqual([]);
      expect((await readCheckpoint(w, stream))?.positionMs).toBe(NOON);
    } finally {
      await deps.api.close();
      await w.close();
    }
  });
});

describe("blocks stored side by side", () => {
  it("fail the window when one fails although the one sent after it was stored; the checkpoint stays; the next run stores everything once", async () => {
    const { config, w } = await simulatorWarehouse(sim.url, {
      SESSIONHOUSE_PAGE_SIZE: "200",
      SESSIONHOUSE_WINDOW: "2h",
      // Small blocks, so that a window is stored in many and two are sent at once.
      SESSIONHOUSE_INSERT_BATCH_ROWS: "40",
    });
    const stream = backfillStream(SESSIONS_STREAM, FROM, NOON);
    const slow = {
      ...config,
      clickhouse: { ...config.clickhouse, insertRetries: 1 },
    };
    const failing = faulty(w, (a) => {
      if (a.table !== "sessions") return undefined;
      const tokens = [
        ...new Set(
          failing.attempts
            .filter((t) => t.table === "sessions")
            .map((t) => t.token),
        ),
      ];
      // The fourth block fails on every try; the others are stored.
      return tokens.indexOf(a.token) === 3 ? "before" : undefined;
    });
    const deps = runDeps(slow, failing.w);
    try {
      const err = await backfill(deps).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "INSERT_FAILED" });
      // The fifth block was sent while the fourth was still being stored.
      const tokens = new Set(
        failing.attempts
          .filter((a) => a.table === "sessions")
          .map((a) => a.token),
      );
      expect(tokens.size).toBeGreaterThanOrEqual(5);
      expect(failing.mostAtOnce()).toBe(2);
      // The failed block's sessions are missing, and the checkpoint is not past any of them.
      const cp = (await readCheckpoint(w, stream))?.positionMs ?? FROM;
      expect(cp).toBeLessThan(NOON);
      const { rows } = await storedSessions(w);
      expect(rows.size).toBeLessThan(expected.size);
      const before = [...expected.values()].filter(
        (s) => Date.parse(s.startTime as string) < cp,
      );
      expect(before.filter((s) => !rows.has(s.id as string))).toEqual([]);

      const again = runDeps(config, w);
      await backfill(again);
      await again.api.close();
      const all = await storedSessions(w);
      expect(all.finalRows).toBe(expected.size);
      expect(sessionDifferences(expected, all.rows, new Set())).toEqual([]);
      expect((await readCheckpoint(w, stream))?.positionMs).toBe(NOON);
    } finally {
      await deps.api.close();
      await w.close();
    }
  });
});
