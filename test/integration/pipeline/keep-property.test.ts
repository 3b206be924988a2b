// Retention, archives, restore and legal holds together, as a property: random sequences of
// operations on a real engine, with an archive directory configured — store sessions of a
// month (marking it synced, flagging what the active holds name, as the writer does), set the
// retention's days, place or release a hold, export a month (skipping a gap on record or not),
// force the TTL (OPTIMIZE … FINAL), restore an archived month into a database of its own. After
// every step:
//   a) the archive verifies (files, chain, rows read back);
//   b) every session ever stored is in `sessions` or in a verified archive month's file (the
//      retention removed it only after its month was archived, with it);
//   c) no session of a person an active hold names leaves `sessions` while the hold is active
//      (one the retention removed, archived, before the hold was placed stays in the archive);
//   d) a restore counts in its target as many sessions of the month as the archive holds.
// Export may refuse (a gap, a month archived already or not synced): never otherwise.
//
// CI form: a fixed seed and a few short sequences. Longer, or another seed:
//   KEEP_RUNS=20 KEEP_STEPS=16 KEEP_SEED=5 npx vitest run test/integration/pipeline/keep-property.test.ts
// (KEEP_PRINT=1 prints each sequence's steps and what they did).
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, it } from "vitest";
import { sessionSchema } from "../../../src/api/schemas/session.js";
import type { Config } from "../../../src/config/index.js";
import {
  exportArchive,
  restoreArchive,
  verifyArchive,
  warehouseReader,
} from "../../../src/pipeline/archive/index.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import {
  activeHolds,
  addHold,
  applyActiveHolds,
  releaseHold,
} from "../../../src/warehouse/holds.js";
import { insertRows } from "../../../src/warehouse/insert.js";
import { migrate } from "../../../src/warehouse/migrate.js";
import { retentionSettings } from "../../../src/warehouse/retention.js";
import { testTmpDir } from "../../helpers/run-tmp.js";
import { sessionRow } from "../../helpers/session-row.js";
import {
  freshDatabaseName,
  markSessionsSynced,
  migratedWarehouse,
  select,
  testConfig,
} from "../../helpers/warehouse.js";

const SEED = Number(process.env.KEEP_SEED ?? 3);
const RUNS = Number(process.env.KEEP_RUNS ?? 4);
const STEPS = Number(process.env.KEEP_STEPS ?? 12);

const DAY = 86_400_000;
const USERS = ["u0@acme.example", "u1@acme.example"] as const;

/** Four months that ended long ago, oldest first: every retention below reaches into some. */
const MONTHS = [5, 4, 3, 2].map((back) => {
  const now = new Date();
  const startMs = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1);
  const endMs = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 1);
  return { name: new Date(startMs).toISOString().slice(0, 7), startMs, endMs };
});

type Op =
  | { kind: "sync"; month: number }
  | { kind: "retention"; days: number }
  | { kind: "hold"; user: number }
  | { kind: "release" }
  | { kind: "export"; month: number; skipGap: boolean }
  | { kind: "ttl" }
  | { kind: "restore"; month: number };

const month = fc.integer({ min: 0, max: MONTHS.length - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant("sync" as const), month }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("retention" as const),
      days: fc.constantFrom(0, 27, 100, 130),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant("hold" as const),
      user: fc.integer({ min: 0, max: 1 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ kind: "release" as const }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant("export" as const),
      month,
      skipGap: fc.boolean(),
    }),
    weight: 4,
  },
  { arbitrary: fc.constant({ kind: "ttl" as const }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant("restore" as const), month }),
    weight: 1,
  },
);

/** A sequence starts with a retention (the TTL in force from the start) and two syncs. */
const sequenceArb = fc
  .array(opArb, { minLength: STEPS - 3, maxLength: STEPS - 3 })
  .map((ops): Op[] => [
    { kind: "retention", days: 27 },
    { kind: "sync", month: 0 },
    { kind: "sync", month: 1 },
    ...ops,
  ]);

/** What the test knows independently of the code under test. */
interface Model {
  /** Every session ever stored: its id → user. */
  stored: Map<string, string>;
  syncs: number;
  /** Sessions in `sessions` after the last step whose person a hold named then. */
  heldKept: Map<string, string>;
  restoreTarget?: Warehouse;
}

interface Env {
  w: Warehouse;
  config: Config;
  root: string;
  model: Model;
}

/** Six completed sessions of a month, new ids, stored as a sync stores them. */
async function sync(env: Env, m: (typeof MONTHS)[number]): Promise<void> {
  const k = env.model.syncs++;
  const rows = Array.from({ length: 6 }, (_, i) => {
    const start = m.startMs + ((k * 6 + i) % 27) * DAY + 3_600_000;
    const user = USERS[i % 2] as string;
    const id = `${m.name}_${k}_${i}`;
    env.model.stored.set(id, user);
    const raw = JSON.stringify({
      id,
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + 60_000).toISOString(),
      duration: "60s",
      sessionStatus: "completed",
      user: {
        type: "human",
        username: user,
        formal: { user: { id: user, email: user } },
      },
      resource: {
        type: "datastore",
        id: "r",
        name: "orders",
        technology: "postgres",
      },
    });
    return sessionRow(sessionSchema.parse(JSON.parse(raw)), raw, Date.now());
  });
  await insertRows(env.w, "sessions", rows, { retries: 0 });
  await markSessionsSynced(
    env.w,
    new Date(m.startMs).toISOString(),
    new Date(m.endMs).toISOString(),
  );
  // The writer flags what an active hold names as it inserts.
  await applyActiveHolds(env.w, "writer", Date.now());
}

/** Refusals export may answer with; anything else fails the property. */
const REFUSALS = new Set(["USAGE", "MONTH_NOT_SYNCED"]);

async function step(env: Env, op: Op): Promise<string> {
  const { w, config } = env;
  switch (op.kind) {
    case "sync":
      await sync(env, MONTHS[op.month] as (typeof MONTHS)[number]);
      return `sync ${MONTHS[op.month]?.name}`;
    case "retention":
      await migrate(w, {
        retention: retentionSettings({
          ...config,
          clickhouse: { ...config.clickhouse, retentionDays: op.days },
        }),
      });
      return `retention ${op.days} days`;
    case "hold":
      await addHold(
        w,
        {
          scope: "user",
          value: USERS[op.user] as string,
          reason: "matter",
          createdBy: "legal",
        },
        Date.now(),
      );
      await applyActiveHolds(w, "legal", Date.now());
      return `hold ${USERS[op.user]}`;
    case "release": {
      const [first] = await activeHolds(w, Date.now());
      if (first === undefined) return "release (no hold)";
      await releaseHold(w, first, { by: "legal", reason: "done" }, Date.now());
      await applyActiveHolds(w, "legal", Date.now());
      return `release ${first.value}`;
    }
    case "export":
      return exportStep(env, op);
    case "ttl":
      await w.client.command({
        query: `OPTIMIZE TABLE \`${w.database}\`.sessions FINAL`,
      });
      return "ttl";
    case "restore":
      return restoreStep(env, op.month);
  }
}

/** Exports a month; refused for a gap, with `skipGap` it is exported again skipping it on record. */
async function exportStep(
  env: Env,
  op: { month: number; skipGap: boolean },
): Promise<string> {
  const name = MONTHS[op.month]?.name as string;
  const attempt = async (skip: boolean): Promise<string> => {
    const r = await exportArchive(env.w, {
      month: name,
      root: env.root,
      skipGap: skip ? { by: "ops", reason: "left out" } : undefined,
    });
    return `export ${name}${skip ? " skipping a gap" : ""}: ${r.rows} rows, ${String(r.marked)} marked`;
  };
  try {
    return await attempt(false);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    if (
      op.skipGap &&
      e.code === "USAGE" &&
      /out of the chain/.test(e.message ?? "")
    )
      return attempt(true);
    if (!REFUSALS.has(e.code ?? "")) throw err;
    return `export ${name} refused (${String(e.code)})`;
  }
}

async function restoreStep(env: Env, m: number): Promise<string> {
  const name = MONTHS[m]?.name as string;
  const archived = await archivedIds(env, name);
  if (archived === undefined) return `restore ${name} (not archived)`;
  if (env.model.restoreTarget === undefined) {
    const target = await openWarehouse({
      ...env.config,
      clickhouse: { ...env.config.clickhouse, database: freshDatabaseName() },
    });
    // Without retention, as `archive restore` migrates its target.
    await migrate(target, { retention: retentionSettings(env.config) });
    env.model.restoreTarget = target;
  }
  const r = await restoreArchive(env.model.restoreTarget, {
    month: name,
    root: env.root,
    allowUnsigned: true,
  });
  const sessions = r.tables.find((t) => t.table === "sessions");
  if ((sessions?.rows ?? 0) < archived.size)
    throw new Error(
      `d) restore of ${name}: ${String(sessions?.rows)} sessions counted in the target, the archive holds ${archived.size}`,
    );
  return `restore ${name}: ${String(sessions?.rows)} sessions`;
}

/** The session ids of a month's archive file; undefined when the month is not archived. */
async function archivedIds(
  env: Env,
  name: string,
): Promise<Set<string> | undefined> {
  const verified = await verifyArchive(env.root, warehouseReader(env.w));
  if (!verified.months.includes(name)) return undefined;
  const file = join(env.root, name, "sessions.parquet");
  const rows = await select<{ id: string }>(
    env.w,
    `SELECT id FROM file('${file}', 'Parquet')`,
  ).catch(() => []);
  return new Set(rows.map((r) => r.id));
}

/** Every invariant, after a step; the list of those broken. */
async function broken(env: Env): Promise<string[]> {
  const out: string[] = [];
  const verified = await verifyArchive(env.root, warehouseReader(env.w));
  if (verified.months.length > 0)
    out.push(...verified.problems.map((p) => `a) ${p}`));
  const archived = new Set<string>();
  for (const name of verified.months)
    for (const id of (await archivedIds(env, name)) ?? []) archived.add(id);
  const kept = new Set(
    (
      await select<{ id: string }>(
        env.w,
        "SELECT DISTINCT id FROM {db}.sessions FINAL",
      )
    ).map((r) => r.id),
  );
  const held = new Set(
    (await activeHolds(env.w, Date.now())).map((h) => h.value),
  );
  for (const id of env.model.stored.keys())
    if (!kept.has(id) && !archived.has(id))
      out.push(`b) ${id} is neither in sessions nor in an archived month`);
  for (const [id, user] of env.model.heldKept)
    if (held.has(user) && !kept.has(id))
      out.push(`c) ${id} of ${user}, held, left sessions`);
  env.model.heldKept = new Map(
    [...env.model.stored].filter(
      ([id, user]) => held.has(user) && kept.has(id),
    ),
  );
  return out;
}

async function runSequence(ops: Op[]): Promise<void> {
  const root = join(
    mkdtempSync(join(testTmpDir(), "sessionhouse-keep-")),
    "archive",
  );
  const config = await testConfig({ SESSIONHOUSE_ARCHIVE_DIR: root });
  const w = await migratedWarehouse(config);
  const env: Env = {
    w,
    config,
    root,
    model: { stored: new Map(), syncs: 0, heldKept: new Map() },
  };
  const done: string[] = [];
  try {
    for (const op of ops) {
      done.push(await step(env, op));
      const problems = await broken(env);
      if (problems.length > 0)
        throw new Error(
          `after ${done.join(" → ")}:\n  ${problems.join("\n  ")}`,
        );
    }
    if (process.env.KEEP_PRINT === "1") console.log(done.join(" → "));
  } finally {
    await env.model.restoreTarget?.close();
    await w.close();
  }
}

describe("retention, archives, restore and holds together", () => {
  it("keep every session in its table or a verified archive month, and every held one in its table", async () => {
    await fc.assert(fc.asyncProperty(sequenceArb, runSequence), {
      seed: SEED,
      numRuns: RUNS,
      endOnFailure: true,
      verbose: 1,
    });
  }, 300_000);
});
