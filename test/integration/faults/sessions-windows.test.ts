// The window ledger of the sessions stream, against the simulator behind a proxy that refuses
// one window, and a real ClickHouse: a window the service refuses for itself is recorded with
// its error and holds the checkpoint, the windows around it are read side by side all the same,
// and once it is read it is marked stored; a refusal that is not the window's (the key, an
// outage) fails the run without counting an attempt against it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../../src/config/index.js";
import { SESSIONS_JOB, backfillStream } from "../../../src/pipeline/names.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import { readCheckpoint } from "../../../src/warehouse/bookkeeping.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { listWindows } from "../../../src/warehouse/windows.js";
import { storedSessions } from "../../helpers/expected.js";
import {
  NOON,
  expectedSessions,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { refusingProxy, type Refusal } from "../../helpers/servers.js";

const HOUR = 3_600_000;
const FROM = NOON - 6 * HOUR;
const BAD = NOON - 3 * HOUR;
let sim: Simulator;

beforeAll(async () => {
  sim = await testSimulator();
});
afterAll(async () => {
  await sim.close();
});

/** ListSessionsV2 for the window starting at BAD answers `refusal()` (none: the real answer). */
async function refusingBad(refusal: () => Refusal | undefined) {
  return refusingProxy(sim.url, (path, body) => {
    if (!path.endsWith("/ListSessionsV2")) return undefined;
    const { startTimestamp } = JSON.parse(body) as { startTimestamp?: unknown };
    return String(startTimestamp) === String(BAD / 1000)
      ? refusal()
      : undefined;
  });
}

async function setup(url: string): Promise<{ config: Config; w: Warehouse }> {
  const { config, w } = await simulatorWarehouse(url, {
    SESSIONHOUSE_WINDOW: "1h",
    SESSIONHOUSE_WINDOW_CONCURRENCY: "3",
  });
  return { config: { ...config, api: { ...config.api, maxRetries: 0 } }, w };
}

const backfill = (deps: ReturnType<typeof runDeps>) =>
  run(deps, SESSIONS_JOB, (ctx) =>
    syncSessions(ctx, {
      fromMs: FROM,
      toMs: NOON,
      nowMs: NOON,
      skipOpenRefresh: true,
    }),
  );

describe("a sessions window the service refuses", () => {
  it("is recorded pending with its error and holds the checkpoint; read later, it is stored and marked so", async () => {
    let refusals = 1;
    const proxy = await refusingBad(() =>
      refusals-- > 0
        ? {
            status: 400,
            code: "invalid_argument",
            message: "startTimestamp: this range cannot be listed",
          }
        : undefined,
    );
    const { config, w } = await setup(proxy.url);
    const deps = runDeps(config, w);
    const stream = backfillStream(SESSIONS_JOB, FROM, NOON);
    try {
      const err = await backfill(deps).catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe("invalid_argument");
      expect((await readCheckpoint(w, stream))?.positionMs).toBe(BAD);
      expect(await listWindows(w, { job: "sessions" })).toEqual([
        expect.objectContaining({
          startMs: BAD,
          endMs: BAD + HOUR,
          state: "pending",
          attempts: 1,
          lastError: expect.stringContaining(
            "invalid_argument (HTTP 400): startTimestamp: this range cannot be listed",
          ) as unknown,
        }),
      ]);

      await backfill(deps);
      expect((await readCheckpoint(w, stream))?.positionMs).toBe(NOON);
      expect(await listWindows(w, { job: "sessions" })).toEqual([
        expect.objectContaining({ startMs: BAD, state: "stored" }),
      ]);
      const { rows } = await storedSessions(w);
      expect(rows.size).toBe((await expectedSessions(sim, FROM, NOON)).length);
    } finally {
      await deps.api.close();
      await w.close();
      await proxy.close();
    }
  });

  it.each([
    ["unauthenticated", 401],
    ["unavailable", 503],
  ] as const)(
    "fails the run on %s without counting an attempt against the window",
    async (code, status) => {
      const proxy = await refusingBad(() => ({
        status,
        code,
        message: "not this window's doing",
      }));
      const { config, w } = await setup(proxy.url);
      const deps = runDeps(config, w);
      try {
        const err = await backfill(deps).catch((e: unknown) => e);
        expect((err as { code?: string }).code).toBe(code);
        expect(await listWindows(w, { job: "sessions" })).toEqual([]);
        expect(
          (await readCheckpoint(w, backfillStream(SESSIONS_JOB, FROM, NOON)))
            ?.positionMs ?? FROM,
        ).toBeLessThanOrEqual(BAD);
      } finally {
        await deps.api.close();
        await w.close();
        await proxy.close();
      }
    },
  );
});
