// A record larger than 1 MiB is handled like any other: a valid one is
// stored with its raw text intact, a broken one is dead-lettered with its raw text intact, and
// the records around them are unaffected.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import {
  API_KEY,
  NOON,
  run,
  runDeps,
  testSimulator,
} from "../../helpers/simulator.js";
import {
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";
import {
  readSessions,
  storedDeadLetters,
  storedSessions,
} from "../../helpers/expected.js";
import { ok, scriptedServer, type TestServer } from "../../helpers/servers.js";
import { SESSIONS_JOB } from "../../../src/pipeline/names.js";

const HOUR = 3_600_000;
const MiB = 1 << 20;
let sim: Simulator;
let server: TestServer;
let page: string[];

beforeAll(async () => {
  sim = await testSimulator();
  const real = [
    ...(await readSessions(sim, NOON - 2 * HOUR, NOON)).values(),
  ].slice(0, 4);
  expect(real).toHaveLength(4);
  const [a, b, c, d] = real as [
    Record<string, unknown>,
    Record<string, unknown>,
    Record<string, unknown>,
    Record<string, unknown>,
  ];
  // A member the exporter does not know, 3 MiB of it, with characters JSON must escape.
  const huge = { ...b, auditTrail: `line "1"\\n${"x".repeat(3 * MiB)}\u00e9` };
  // …and a session whose user is in 60000 groups (the brand member holds the identity).
  const user = c.user as { formal: { user: Record<string, unknown> } };
  const groups = Array.from(
    { length: 60_000 },
    (_, i) => `group-${i}-${"g".repeat(12)}`,
  );
  const hugeGroups = {
    ...c,
    user: {
      ...user,
      formal: { ...user.formal, user: { ...user.formal.user, groups } },
    },
  };
  const hugeBroken: Record<string, unknown> = {
    ...d,
    auditTrail: "y".repeat(2 * MiB),
  };
  delete hugeBroken.id;
  page = [a, huge, hugeGroups, hugeBroken].map((r) => JSON.stringify(r));
  server = await scriptedServer((_n, req, res) => {
    const body = JSON.parse(req.body) as { cursor?: string };
    // One page holding the four records, served whatever the window: the test syncs one window.
    ok(
      res,
      body.cursor
        ? { listMetadata: {} }
        : {
            sessions: page.map((t) => JSON.parse(t) as unknown),
            listMetadata: { count: 4 },
          },
    );
  });
});
afterAll(async () => {
  await server.close();
  await sim.close();
});

describe("a record larger than 1 MiB", () => {
  it("is stored, or dead-lettered when broken, with its raw text exactly as received", async () => {
    expect(page[1]!.length).toBeGreaterThan(3 * MiB);
    expect(page[2]!.length).toBeGreaterThan(MiB);
    expect(page[3]!.length).toBeGreaterThan(2 * MiB);
    const config = await testConfig({
      SESSIONHOUSE_API_URL: server.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_MAX_RPS: "1000",
    });
    const w = await migratedWarehouse(config);
    const deps = runDeps(config, w);
    try {
      const r = await run(deps, SESSIONS_JOB, (ctx) =>
        syncSessions(ctx, {
          fromMs: NOON - 6 * HOUR,
          toMs: NOON,
          nowMs: NOON,
          skipOpenRefresh: true,
        }),
      );
      expect(r.rows).toBe(3);
      expect(r.deadLetters).toBe(1);
      const { rows } = await storedSessions(w);
      const stored = page
        .slice(0, 3)
        .map((t) => JSON.parse(t) as { id: string });
      expect([...rows.keys()].sort()).toEqual(stored.map((s) => s.id).sort());
      for (const s of stored)
        expect(JSON.parse(rows.get(s.id)!.raw)).toEqual(s);
      const [groups] = await select<{ n: string }>(
        w,
        "SELECT length(user_groups) AS n FROM {db}.sessions FINAL WHERE id = {id:String}",
        {
          id: stored[2]!.id,
        },
      );
      expect(Number(groups?.n)).toBe(60_000);
      const dead = await storedDeadLetters(w, SESSIONS_JOB);
      expect(dead).toHaveLength(1);
      expect(dead[0]?.raw).toBe(page[3]);
      expect(dead[0]?.reason).toBe("id: session has no id");
    } finally {
      await deps.api.close();
      await w.close();
    }
  });
});
