// `detect test`: every rule's fixtures run on a real engine. For each fixture the database is
// emptied, its table rows and `earlier` sessions are stored, then its `sessions` arrive in a
// window of their own, stored by the sessions sync's writer as a sync stores them; the rule is
// evaluated over that window as the detections job evaluates it, and once more to check that
// nothing fires twice.
import { deepMerge } from "../config/index.js";
import type { JobContext } from "../pipeline/context.js";
import { SessionWriter } from "../pipeline/session-writer.js";
import { emptyTables, insertRows } from "../warehouse/index.js";
import { recordWindow } from "./evaluate.js";
import { historicalAfterMs } from "./history.js";
import type { Fixture, Rule } from "./rule.js";

/** The session record a fixture's session is merged over: complete, completed, a human via the brand member. */
const DEFAULT_SESSION = {
  startTime: "2026-01-05T10:00:00Z",
  sessionStatus: "completed",
  network: { clientIpAddress: "10.0.0.10", serverIpAddress: "10.0.1.10" },
  sidecar: {
    id: "sdc-fixture",
    name: "fixture-sidecar",
    technology: "postgres",
  },
  user: {
    type: "human",
    username: "alice",
    formal: {
      user: {
        id: "usr-alice",
        name: "Alice",
        email: "alice@example.com",
        type: "human",
        groups: ["analysts"],
      },
    },
  },
  resource: {
    type: "datastore",
    id: "res-orders",
    name: "orders-db",
    technology: "postgres",
  },
  connector: { id: "con-1", name: "default" },
};
const OPEN_STATUSES = new Set(["active", "idle"]);
const DEFAULT_LENGTH_MS = 600_000;

type Json = Record<string, unknown>;

/** A fixture's session as a complete record: defaults filled, an end for a completed one. */
export function fixtureSession(over: Json, id: string): Json {
  const s = deepMerge({ ...DEFAULT_SESSION, id }, over);
  const startMs = Date.parse(String(s.startTime));
  if (OPEN_STATUSES.has(String(s.sessionStatus))) {
    delete s.endTime;
    delete s.duration;
  } else if (s.endTime === undefined && Number.isFinite(startMs)) {
    s.endTime = new Date(startMs + DEFAULT_LENGTH_MS).toISOString();
    s.duration = `${DEFAULT_LENGTH_MS / 1000}s`;
  }
  return s;
}

/** The latest instant a record names (its end, else its start). */
function lastInstant(records: readonly Json[]): number {
  let last = 0;
  for (const r of records)
    last = Math.max(last, Date.parse(String(r.endTime ?? r.startTime)) || 0);
  return last;
}

export interface FixtureOutcome {
  rule: Rule;
  fixture: Fixture;
  line: number;
  hits: number;
  /** Hits a second evaluation of the same window recorded (must be 0). */
  again: number;
  passed: boolean;
}

async function store(
  ctx: JobContext,
  records: readonly Json[],
  fetchedAtMs: number,
): Promise<void> {
  if (records.length === 0) return;
  const writer = new SessionWriter(ctx);
  await writer.add(
    records.map((r) => {
      const text = JSON.stringify(r);
      return { text, value: JSON.parse(text) as unknown };
    }),
    fetchedAtMs,
  );
  await writer.drain();
}

/** Runs one fixture of a rule; the database is emptied first. */
export async function runFixture(
  ctx: JobContext,
  rule: Rule,
  index: number,
): Promise<FixtureOutcome> {
  const fixture = rule.fixtures[index] as Fixture;
  const w = ctx.warehouse;
  await emptyTables(w);
  for (const [table, rows] of Object.entries(fixture.tables))
    await insertRows(w, table, rows, ctx.insert);
  const earlier = fixture.earlier.map((s, i) =>
    fixtureSession(s, `fx-${index}-earlier-${i}`),
  );
  const sessions = fixture.sessions.map((s, i) =>
    fixtureSession(s, `fx-${index}-${i}`),
  );
  // Each group is fetched a second after the last instant it names; the window opens after
  // the earlier sessions' fetch and closes after the sessions' fetch.
  const earlierFetch = lastInstant(earlier) + 1000;
  await store(ctx, earlier, earlierFetch);
  const fromMs = earlierFetch + 1;
  const fetchMs = Math.max(
    fromMs,
    lastInstant(sessions) + 1000,
    fixture.arrivedAt === undefined ? 0 : Date.parse(fixture.arrivedAt),
  );
  await store(ctx, sessions, fetchMs);
  const window = { fromMs, toMs: fetchMs + 1, scope: "arrived" as const };
  const clock = (nowMs: number) => ({
    nowMs,
    historicalAfterMs: historicalAfterMs(ctx.config),
  });
  const hits = await recordWindow(
    w,
    rule,
    window,
    ctx.insert,
    clock(fetchMs + 1),
  );
  const again = await recordWindow(
    w,
    rule,
    window,
    ctx.insert,
    clock(fetchMs + 2),
  );
  return {
    rule,
    fixture,
    line: rule.fixtureLines[index] ?? 1,
    hits: hits.length,
    again: again.length,
    passed: hits.length > 0 === fixture.fires && again.length === 0,
  };
}
