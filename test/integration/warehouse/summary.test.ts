// The demo's summary names people as the dashboards do: synced from the simulator (sessions,
// users and identity links), every session of the busiest users is someone — the person behind
// it, or the native account and its resource — and no row is blank.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syncEntityStream } from "../../../src/pipeline/entity-streams.js";
import { syncSessions } from "../../../src/pipeline/session-sync.js";
import type { Simulator } from "../../../src/simulator/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  busiestUsersSql,
  sessionSummary,
} from "../../../src/warehouse/summary.js";
import {
  NOON,
  run,
  runDeps,
  simulatorWarehouse,
  testSimulator,
} from "../../helpers/simulator.js";
import { select } from "../../helpers/warehouse.js";

let sim: Simulator;
let w: Warehouse;

beforeAll(async () => {
  sim = await testSimulator();
  const made = await simulatorWarehouse(sim.url, {
    SESSIONHOUSE_INITIAL_LOOKBACK: "2d",
  });
  w = made.w;
  const deps = runDeps(made.config, w);
  await run(deps, "sessions", (ctx) => syncSessions(ctx, { nowMs: NOON }));
  for (const stream of ["users", "identity_links"] as const)
    await run(deps, stream, (ctx) => syncEntityStream(ctx, stream, NOON));
});

afterAll(async () => {
  await w.close();
  await sim.close();
});

describe("demo summary: busiest users", () => {
  it("names every user, and native accounts by their person or their resource", async () => {
    const tables = await sessionSummary(w);
    const busiest = tables.find((t) => t.title === "Busiest users");
    expect(busiest?.rows.length).toBe(5);
    for (const row of busiest?.rows ?? []) {
      expect(String(row.user).trim(), JSON.stringify(row)).not.toBe("");
      expect(row.user).not.toBe("(no user in the record)");
    }
    // The sessions of native accounts, which the old summary showed as one blank user.
    const native = await select<{ sessions: string }>(
      w,
      `SELECT count() AS sessions FROM {db}.sessions FINAL WHERE user_id = '' AND end_user_id = '' AND native_username != ''`,
    );
    expect(Number(native[0]?.sessions)).toBeGreaterThan(0);
  });

  it("shows the person an identity link names, else the account on its resource", async () => {
    const rows = await select<{ user: string; via: string; sessions: string }>(
      w,
      busiestUsersSql(w, 1_000_000),
    );
    const vias = new Set(rows.map((r) => r.via));
    expect(vias).toContain("native account, identity link to a user");
    expect(vias).toContain("native account, no identity link");
    for (const r of rows) {
      expect(r.user.trim(), JSON.stringify(r)).not.toBe("");
      if (r.via === "native account, no identity link")
        expect(r.user).toMatch(/^\S+ on \S+$/);
      if (r.via === "native account, identity link to a user")
        expect(r.user).toContain("@");
    }
    // Every session is counted once, under one person.
    const total = rows.reduce((n, r) => n + Number(r.sessions), 0);
    const stored = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.sessions FINAL",
    );
    expect(total).toBe(Number(stored[0]?.n));
  });
});
