// Every Get answer proves whose it is: a GetSession or GetUser answer that holds another object
// than the one asked for (the simulator's otherObject fault, over real HTTP) is a bad answer
// (BAD_RESPONSE naming both ids), retried and then refused. Nothing of it is stored: no session
// or user that was never asked for appears, the one asked for keeps its stored row (a user is
// not taken as deleted), and it stays pending, read again on the next run; the run's error says
// why.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { ApiError } from "../../../src/api/errors.js";
import type { Config } from "../../../src/config/index.js";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import { refreshOpenSessions } from "../../../src/pipeline/open-sessions.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import { OPEN_REFRESH_JOB, SESSIONS_JOB } from "../../../src/pipeline/names.js";
import { SimClock, type Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  sessionsToPoll,
  sessionUserIds,
} from "../../../src/warehouse/index.js";
import { listWindows } from "../../../src/warehouse/windows.js";
import { memoryLogger } from "../../helpers/logs.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

const HOUR = 3_600_000;
const FROM = NOON - 3 * HOUR;
/** Every Get of an id this fault draws is answered with another object, on every try. */
const LIES = { rates: { otherObject: 0.3 }, seed: 11 };

const clock = SimClock.fixed(NOON);
/** The service as it is, and the same service (same seed, same clock) answering some Gets with another object. */
let sim: Simulator;
let liar: Simulator;

beforeAll(async () => {
  [sim, liar] = await Promise.all([
    testSimulator({ clock }),
    testSimulator({ clock, faults: LIES }),
  ]);
});
afterAll(async () => {
  await sim.close();
  await liar.close();
});

/** `config` pointed at `url`, with quick retries: one retry of a bad answer. */
function against(config: Config, url: string): Config {
  return {
    ...config,
    api: { ...config.api, url, maxRetries: 1, retryBaseMs: 1, retryMaxMs: 5 },
  };
}

/** The Gets the liar answered with another object, for one operation. */
function lies(operation: string) {
  return liar.otherObjects().filter((o) => o.operation === operation);
}

describe("ControlPlaneApi: a Get answer for another id", () => {
  it("GetSession and GetUser: BAD_RESPONSE naming the id asked for and the one answered, after the retries", async () => {
    const { config, w } = await simulatorWarehouse(liar.url);
    await w.close();
    const api = ControlPlaneApi.fromConfig(against(config, liar.url));
    try {
      const sessions = [...liar.sessionIdsIn(FROM, NOON)];
      // Ask for every session until one is answered with another.
      let lied: { askedId: string; answeredId: string } | undefined;
      for (const id of sessions) {
        const before = liar.stats().byMethod.GetSession ?? 0;
        const got = await api
          .getSession(id)
          .then((s) => ({ s }))
          .catch((err: unknown) => ({ err }));
        if ("s" in got) {
          expect((got.s as { id: string }).id).toBe(id);
          continue;
        }
        lied = lies("GetSession").find((o) => o.askedId === id);
        expect(lied, id).toBeDefined();
        const err = got.err as ApiError;
        expect(err).toBeInstanceOf(ApiError);
        expect(err.code).toBe("BAD_RESPONSE");
        expect(err.message).toContain("not a GetSession answer");
        expect(err.message).toContain(
          `the answer is for session "${lied?.answeredId}", not for session "${id}" that was asked for`,
        );
        expect(err.message).toMatch(/gave up after 2 tries/);
        expect((liar.stats().byMethod.GetSession ?? 0) - before).toBe(2);
        break;
      }
      expect(lied).toBeDefined();

      const users = [...liar.generator.index.userById.keys()];
      let userLie: { askedId: string; answeredId: string } | undefined;
      for (const id of users) {
        const got = await api
          .getUser(id)
          .then((u) => ({ u }))
          .catch((err: unknown) => ({ err }));
        if ("u" in got) {
          if (got.u !== undefined)
            expect((got.u as { id: string }).id).toBe(id);
          continue;
        }
        userLie = lies("GetUser").find((o) => o.askedId === id);
        expect(userLie, id).toBeDefined();
        expect((got.err as ApiError).code).toBe("BAD_RESPONSE");
        expect((got.err as ApiError).message).toContain(
          `the answer is for user "${userLie?.answeredId}", not for user "${id}" that was asked for`,
        );
        break;
      }
      expect(userLie).toBeDefined();
    } finally {
      await api.close();
    }
  });
});

interface StoredSession {
  id: string;
  session_status: string;
  fetched_at: string;
  raw: string;
}

async function storedSessions(
  w: Warehouse,
): Promise<Map<string, StoredSession>> {
  const rows = await select<StoredSession>(
    w,
    "SELECT id, session_status, fetched_at, raw FROM {db}.sessions FINAL",
  );
  return new Map(rows.map((r) => [r.id, r]));
}

describe("the re-read of open sessions", () => {
  it("stores no session it did not ask for, leaves the asked-for ones as stored and fails saying why", async () => {
    const { config, w } = await simulatorWarehouse(sim.url, {
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_WINDOW: "3h",
    });
    const deps = runDeps(config, w);
    const lying = runDeps(against(config, liar.url), w);
    try {
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: FROM,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      );
      const before = await storedSessions(w);
      const open = [...before.values()].filter(
        (r) => r.session_status !== "completed",
      );
      expect(open.length).toBeGreaterThan(3);

      const failure = await run(lying, OPEN_REFRESH_JOB, (ctx) =>
        refreshOpenSessions(ctx, { beforeMs: NOON, nowMs: NOON }),
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
      const openIds = new Set(open.map((r) => r.id));
      const lied = lies("GetSession").filter((o) => openIds.has(o.askedId));
      expect(lied.length).toBeGreaterThan(0);
      // The run fails on the lie and says whose answer it was.
      expect(failure).toBeInstanceOf(ApiError);
      const err = failure as ApiError;
      expect(err.code).toBe("BAD_RESPONSE");
      expect(
        lied.some((o) =>
          err.message.includes(
            `the answer is for session "${o.answeredId}", not for session "${o.askedId}"`,
          ),
        ),
        err.message,
      ).toBe(true);

      // No session that was not asked for; the ones asked for keep their stored rows.
      const after = await storedSessions(w);
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
      for (const o of lied) {
        expect(after.has(o.answeredId), o.answeredId).toBe(
          before.has(o.answeredId),
        );
        expect(after.get(o.askedId)?.raw).toBe(before.get(o.askedId)?.raw);
        expect(after.get(o.askedId)?.fetched_at).toBe(
          before.get(o.askedId)?.fetched_at,
        );
      }
      // Still open, so still followed: the next re-read asks for them again.
      const followed = new Set(
        (
          await sessionsToPoll(w, {
            beforeMs: NOON,
            unknownSinceMs: NOON - config.sessions.unknownStatusPollMs,
          })
        ).map((p) => p.id),
      );
      for (const o of lied)
        expect(followed.has(o.askedId), o.askedId).toBe(true);
      expect(followed.size).toBe(open.length);
    } finally {
      await deps.api.close();
      await lying.api.close();
      await w.close();
    }
  });
});

interface StoredUser {
  id: string;
  is_deleted: number | string;
}

describe("the users stream (GetUser per id)", () => {
  it("stores no user it did not ask for, takes none as deleted, keeps the id pending and fails naming both ids", async () => {
    const { config, w } = await simulatorWarehouse(sim.url, {
      SESSIONHOUSE_PAGE_SIZE: "500",
      SESSIONHOUSE_WINDOW: "1h",
    });
    const log = memoryLogger([], "info");
    const deps = runDeps(config, w);
    const lying = runDeps(against(config, liar.url), w, { logger: log.logger });
    try {
      await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: NOON - HOUR,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      );
      await run(deps, "users", (ctx) => syncEntityStream(ctx, "users", NOON));
      const users = () =>
        select<StoredUser>(w, "SELECT id, is_deleted FROM {db}.users FINAL");
      const before = await users();
      const asked = new Set(await sessionUserIds(w));
      expect(before.length).toBeGreaterThan(5);
      expect(before.every((u) => asked.has(u.id))).toBe(true);

      // A day later every user is due again; the service answers some with another user.
      const later = NOON + 25 * HOUR;
      const failure = await run(lying, "users", (ctx) =>
        syncEntityStream(ctx, "users", later),
      ).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      const lied = lies("GetUser").filter((o) => asked.has(o.askedId));
      expect(lied.length).toBeGreaterThan(0);
      // One of them answered with a user this exporter never asked for.
      expect(lied.some((o) => !asked.has(o.answeredId))).toBe(true);

      expect(failure?.message).toMatch(/users: \d+ ids could not be read/);
      expect(failure?.message).toContain(
        `users: ${lied.length} ids could not be read`,
      );
      expect(
        lied.some((o) =>
          failure?.message.includes(
            `the answer is for user "${o.answeredId}", not for user "${o.askedId}"`,
          ),
        ),
        failure?.message,
      ).toBe(true);

      const after = await users();
      // No user that was never asked for, none taken as deleted.
      expect(after.map((u) => u.id).sort()).toEqual(
        before.map((u) => u.id).sort(),
      );
      expect(after.filter((u) => Number(u.is_deleted) !== 0)).toEqual([]);
      const deleted = await select<{ id: string }>(
        w,
        "SELECT id FROM {db}.users_history FINAL WHERE is_deleted = 1",
      );
      expect(deleted).toEqual([]);
      // Each lied-about id waits in the parent ledger, read again on the next run.
      const pending = await listWindows(w, { job: "users" });
      expect(
        pending.map((p) => [p.parent, p.state, p.lastError]).sort(),
      ).toEqual(lied.map((o) => [o.askedId, "pending", "BAD_RESPONSE"]).sort());
      // The warning of each names both ids.
      for (const o of lied)
        expect(log.text()).toContain(
          `the answer is for user \\"${o.answeredId}\\", not for user \\"${o.askedId}\\"`,
        );
    } finally {
      await deps.api.close();
      await lying.api.close();
      await w.close();
    }
  });
});
