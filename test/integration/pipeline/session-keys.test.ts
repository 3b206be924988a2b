// A session whose start time differs between two reads is one session: after the second read,
// `sessions FINAL` holds one row for it, with the newest read's values and record, the rollups
// and the summary count it once, and the open-session refresh does not follow the row it had
// under its old start time. Against the simulator over HTTP and a real engine; the simulator
// states a corrected start time in ListSessionsV2 and GetSession, or in GetSession alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { refreshOpenSessions } from "../../../src/pipeline/open-sessions.js";
import { rollUp } from "../../../src/pipeline/rollups.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { SESSIONS_JOB, OPEN_REFRESH_JOB } from "../../../src/pipeline/names.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { retireSupersededKeys } from "../../../src/warehouse/session-keys.js";
import { qualified } from "../../../src/warehouse/sql.js";
import { sessionsToPoll } from "../../../src/warehouse/session-polls.js";
import { sessionSummary } from "../../../src/warehouse/summary.js";
import {
  expectedSessions,
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
const FROM = NOON - 6 * HOUR;

let sim: Simulator;
beforeAll(async () => {
  sim = await testSimulator();
});
afterAll(async () => {
  await sim.close();
});

interface Fixture {
  config: Config;
  w: Warehouse;
  deps: ReturnType<typeof runDeps>;
  sync(): Promise<unknown>;
  refresh(): Promise<number>;
  close(): Promise<void>;
}

async function fixture(): Promise<Fixture> {
  const { config, w } = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_PAGE_SIZE: "500",
    SESSIONHOUSE_WINDOW: "6h",
    // Every sync reads the six hours before noon again.
    SESSIONHOUSE_INITIAL_LOOKBACK: "6h",
    SESSIONHOUSE_LOOKBACK: "6h",
  });
  const deps = runDeps(config, w);
  return {
    config,
    w,
    deps,
    sync: () =>
      run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, { nowMs: NOON, skipOpenRefresh: true }),
      ),
    refresh: () =>
      run(deps, OPEN_REFRESH_JOB, (ctx) =>
        refreshOpenSessions(ctx, { beforeMs: NOON, nowMs: NOON }),
      ),
    close: async () => {
      await deps.api.close();
      await w.close();
    },
  };
}

interface Row {
  id: string;
  start_time: string;
  session_status: string;
  raw: string;
}

async function finalRows(w: Warehouse, id: string): Promise<Row[]> {
  return select<Row>(
    w,
    `SELECT id, toString(start_time) AS start_time, session_status, raw
     FROM {db}.sessions FINAL WHERE id = {id:String}`,
    { id },
  );
}

/** A stored session of the range in `status`, from the middle of the range. */
async function storedSession(w: Warehouse, open: boolean): Promise<string> {
  const [row] = await select<{ id: string }>(
    w,
    `SELECT id FROM {db}.sessions FINAL
     WHERE (session_status = 'completed') = {completed:Bool}
       AND start_time >= {from:DateTime64(3, 'UTC')} AND parent_session_id = ''
     ORDER BY start_time, id LIMIT 1`,
    {
      completed: !open,
      from: new Date(FROM + 2 * HOUR)
        .toISOString()
        .replace("T", " ")
        .slice(0, 23),
    },
  );
  expect(row).toBeDefined();
  return (row as { id: string }).id;
}

const chMs = (ms: number) =>
  new Date(ms).toISOString().replace("T", " ").replace("Z", "");

describe("a session read under another start time", () => {
  it("is one row under FINAL with the newest read, counted once by the rollups and the summary", async () => {
    const f = await fixture();
    try {
      await f.sync();
      const id = await storedSession(f.w, false);
      const before = sim.generator.getSession(id);
      expect(before).toBeDefined();
      // Corrected to the day before: another day, another part of the table.
      const newStart = (before?.startMs ?? 0) - 13 * HOUR;
      // Rolled up before the correction (the days of the range, settled long after).
      const later = NOON + 10 * 24 * HOUR;
      const logger = createLogger({ level: "silent" });
      await rollUp({ config: f.config, warehouse: f.w, logger }, later);

      sim.correctStartTime(id, newStart);
      await f.sync();

      const rows = await finalRows(f.w, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]?.start_time).toBe(chMs(newStart));
      // The record of the newest read, as the service sent it.
      const served = (await expectedSessions(sim, FROM, NOON)).find(
        (s) => s.id === id,
      );
      expect(JSON.parse(rows[0]?.raw ?? "{}")).toEqual(served);
      expect(served?.startTime).toBe(new Date(newStart).toISOString());

      // Every session of the range once, under FINAL and in the views on it.
      const sessions = (await expectedSessions(sim, FROM, NOON)).length;
      const [counts] = await select<{ rows: string; ids: string }>(
        f.w,
        "SELECT count() AS rows, uniqExact(id) AS ids FROM {db}.sessions FINAL",
      );
      expect(Number(counts?.rows)).toBe(sessions);
      expect(Number(counts?.ids)).toBe(sessions);
      const [enriched] = await select<{ n: string }>(
        f.w,
        "SELECT count() AS n FROM {db}.sessions_enriched WHERE id = {id:String}",
        { id },
      );
      expect(Number(enriched?.n)).toBe(1);
      const summary = await sessionSummary(f.w);
      expect(Number(summary[0]?.rows[0]?.sessions)).toBe(sessions);

      // The rollups: the day it left is computed again, the day it moved to counts it.
      await rollUp({ config: f.config, warehouse: f.w, logger }, later);
      const [rolled] = await select<{ n: string }>(
        f.w,
        "SELECT sum(sessions) AS n FROM {db}.session_rollups_daily FINAL WHERE sessions > 0",
      );
      expect(Number(rolled?.n)).toBe(sessions);
      const [byTechnology] = await select<{ n: string }>(
        f.w,
        "SELECT sum(sessions) AS n FROM {db}.session_technology_rollups_daily FINAL WHERE sessions > 0",
      );
      expect(Number(byTechnology?.n)).toBe(sessions);
    } finally {
      await f.close();
    }
  });

  it("via GetSession: the open row under the old start time is not followed again, whatever the list says after", async () => {
    const f = await fixture();
    try {
      await f.sync();
      const id = await storedSession(f.w, true);
      const s = sim.generator.getSession(id);
      expect(s).toBeDefined();
      // GetSession states a start early enough for the session to have ended by now.
      const newStart = NOON - (s?.durationMs ?? 0) - 60_000;
      sim.correctStartTime(id, newStart, { getSessionOnly: true });
      const followed = () =>
        sessionsToPoll(f.w, { beforeMs: NOON, unknownSinceMs: 0 });
      expect((await followed()).map((p) => p.id)).toContain(id);

      await f.refresh();
      const rows = await finalRows(f.w, id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        start_time: chMs(newStart),
        session_status: "completed",
      });
      expect((await followed()).map((p) => p.id)).not.toContain(id);

      // The list still states the old start, open: a completed read outranks it.
      await f.sync();
      const again = await finalRows(f.w, id);
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({
        start_time: chMs(newStart),
        session_status: "completed",
      });
      expect((await followed()).map((p) => p.id)).not.toContain(id);
      // Every read is kept as evidence: both keys' reads and the tombstones are stored.
      const [all] = await select<{ keys: string; tombstones: string }>(
        f.w,
        `SELECT uniqExact(start_time) AS keys, countIf(is_deleted = 1) AS tombstones
         FROM {db}.sessions WHERE id = {id:String}`,
        { id },
      );
      expect(Number(all?.keys)).toBe(2);
      expect(Number(all?.tombstones)).toBe(2);
    } finally {
      await f.close();
    }
  });

  it("a block of 30,000 sessions read again, their ids more than a URL holds: the earlier keys retired", async () => {
    const BULK = 30_000;
    const w = await migratedWarehouse(await testConfig());
    try {
      // Ids of 40 characters, 44 bytes each quoted in a list: 30,000 of them are 1.3 MB, more
      // than a server's request line (http_max_uri_size, 1 MiB) and ten times the literals of
      // one query. (A block of 100,000 proved nothing more and took three times as long.)
      const sessions = qualified(w, "sessions");
      const store = (rows: {
        start: string;
        version: number;
        fetched: string;
        deleted?: string;
      }) =>
        w.client.command({
          query: `INSERT INTO ${sessions} (id, start_time, session_status, fetched_at, version, is_deleted)
            SELECT concat('bulk-', leftPad(toString(number), 6, '0'), '-', repeat('k', 28)),
              toDateTime64('${rows.start}', 3, 'UTC'), 'completed',
              toDateTime64('${rows.fetched}', 3, 'UTC'), ${rows.version}, ${rows.deleted ?? "0"}
            FROM numbers(${BULK})`,
        });
      // Each read under one start, then under another an hour earlier; the earlier key of all
      // but the first 5,000 already retired by a tombstone.
      await store({
        start: "2026-01-05 10:00:00",
        version: 1,
        fetched: "2026-01-05 12:00:00",
      });
      await store({
        start: "2026-01-05 10:00:00",
        version: 2,
        fetched: "2026-01-05 12:01:00",
        deleted: "number >= 5000",
      });
      // The block read again since: every id of it is stored under two start times.
      await store({
        start: "2026-01-05 09:00:00",
        version: 3,
        fetched: "2026-01-05 12:05:00",
      });
      const retired = await retireSupersededKeys(
        w,
        Date.parse("2026-01-05T12:05:00Z"),
      );
      expect(retired).toBe(5_000);
      const [final] = await select<{ n: string; early: string }>(
        w,
        "SELECT count() AS n, countIf(toHour(start_time) = 9) AS early FROM {db}.sessions FINAL",
      );
      expect(Number(final?.n)).toBe(BULK);
      expect(Number(final?.early)).toBe(BULK);
    } finally {
      await w.close();
    }
  });
});

describe("the keys of sessions all read since the instant a drain looks from", () => {
  /** Stores `n` sessions read at 12:05 under one start each, and `twice` of them again under another. */
  async function storeFresh(w: Warehouse, n: number, twice: number) {
    const sessions = qualified(w, "sessions");
    const store = (count: number, start: string, version: number) =>
      w.client.command({
        query: `INSERT INTO ${sessions} (id, start_time, session_status, fetched_at, version)
          SELECT concat('fresh-', toString(number)), toDateTime64('${start}', 3, 'UTC'),
            'completed', toDateTime64('2026-01-05 12:05:00', 3, 'UTC'), ${version}
          FROM numbers(${count})`,
      });
    await store(n, "2026-01-05 10:00:00", 1);
    if (twice > 0) await store(twice, "2026-01-05 09:00:00", 2);
  }

  /** The SQL of every query `w` runs while `fn` does. */
  async function queriesOf(
    w: Warehouse,
    fn: () => Promise<unknown>,
  ): Promise<string[]> {
    const seen: string[] = [];
    const query = w.client.query.bind(w.client);
    w.client.query = (params: Parameters<typeof query>[0]) => {
      seen.push(params.query);
      return query(params);
    };
    try {
      await fn();
    } finally {
      w.client.query = query;
    }
    return seen;
  }

  it("each under one start time: nothing retired, and the ids are not grouped one by one", async () => {
    const w = await migratedWarehouse(await testConfig());
    try {
      await storeFresh(w, 20_000, 0);
      let retired = -1;
      const queries = await queriesOf(w, async () => {
        retired = await retireSupersededKeys(
          w,
          Date.parse("2026-01-05T12:05:00Z"),
        );
      });
      expect(retired).toBe(0);
      expect(queries.filter((q) => /GROUP BY id/.test(q))).toEqual([]);
    } finally {
      await w.close();
    }
  });

  it("some under two start times within the same reads: their earlier keys retired", async () => {
    const w = await migratedWarehouse(await testConfig());
    try {
      await storeFresh(w, 20_000, 3);
      const retired = await retireSupersededKeys(
        w,
        Date.parse("2026-01-05T12:05:00Z"),
      );
      // The later read (version 2, at 09:00) stays; the key at 10:00 of each of the 3 goes.
      expect(retired).toBe(3);
      const [final] = await select<{ n: string; early: string }>(
        w,
        "SELECT count() AS n, countIf(toHour(start_time) = 9) AS early FROM {db}.sessions FINAL",
      );
      expect(Number(final?.n)).toBe(20_000);
      expect(Number(final?.early)).toBe(3);
    } finally {
      await w.close();
    }
  });
});
