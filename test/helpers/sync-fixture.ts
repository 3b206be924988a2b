// A sessions sync of one 6-hour window against a scripted server, with fast retries: what the
// answer-check tests run, and what they read back (rows, dead letters, checkpoints).
import type { ServerResponse } from "node:http";
import { afterAll } from "vitest";
import type { Config } from "../../src/config/index.js";
import { syncSessions } from "../../src/pipeline/session-sync.js";
import {
  storedDeadLetters,
  storedSessions,
  type StoredDeadLetter,
} from "./expected.js";
import { API_KEY, NOON, run, runDeps } from "./simulator.js";
import {
  migratedWarehouse,
  reusedDatabase,
  select,
  testConfig,
  type ReusedDatabase,
} from "./warehouse.js";
import { scriptedServer, type Recorded } from "./servers.js";
import { SESSIONS_JOB } from "../../src/pipeline/names.js";

export const HOUR = 3_600_000;
export const FROM = NOON - 6 * HOUR;

export interface SyncOutcome {
  error: (Error & { code?: string; hint?: string }) | undefined;
  requests: Recorded[];
  /** Stored raw text by session id. */
  rows: Map<string, string>;
  dead: StoredDeadLetter[];
  checkpoints: number;
}

/** The cursor a request sent ("" for the first page). */
export function cursorOf(req: Recorded): string {
  return (JSON.parse(req.body) as { cursor?: string }).cursor ?? "";
}

export function answer(res: ServerResponse, body: string | Buffer): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(body);
}

let shared: ReusedDatabase | undefined;

/**
 * For the test file that calls this at its top level: its syncs share one migrated database,
 * emptied before each (reusedDatabase in warehouse.ts), instead of a fresh one each, whose
 * schema replay takes seconds. Each sync so starts from what a fresh database holds.
 */
export function oneDatabaseForFile(): void {
  const db = reusedDatabase();
  shared = db;
  afterAll(() => db.close());
}

export async function syncAgainst(
  script: (n: number, req: Recorded, res: ServerResponse) => void,
  options: {
    env?: Record<string, string>;
    api?: Partial<Config["api"]>;
    sessions?: Partial<Config["sessions"]>;
  } = {},
): Promise<SyncOutcome> {
  const server = await scriptedServer(script);
  const base = await testConfig(
    {
      SESSIONHOUSE_API_URL: server.url,
      SESSIONHOUSE_API_KEY: API_KEY,
      SESSIONHOUSE_WINDOW: "6h",
      SESSIONHOUSE_MAX_RPS: "1000",
      ...options.env,
    },
    shared?.name,
  );
  const config: Config = {
    ...base,
    api: {
      ...base.api,
      maxRetries: 2,
      retryBaseMs: 1,
      retryMaxMs: 5,
      ...options.api,
    },
    sessions: { ...base.sessions, ...options.sessions },
  };
  const w = shared
    ? await shared.fresh(config)
    : await migratedWarehouse(config);
  const deps = runDeps(config, w);
  try {
    const error = await run(deps, SESSIONS_JOB, (ctx) =>
      syncSessions(ctx, {
        fromMs: FROM,
        toMs: NOON,
        nowMs: NOON,
        skipOpenRefresh: true,
      }),
    ).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    const { rows } = await storedSessions(w);
    const [cp] = await select<{ n: string }>(
      w,
      "SELECT count() AS n FROM {db}.checkpoints",
    );
    return {
      error,
      requests: server.requests,
      rows: new Map([...rows].map(([id, r]) => [id, r.raw])),
      dead: await storedDeadLetters(w, SESSIONS_JOB),
      checkpoints: Number(cp?.n),
    };
  } finally {
    await deps.api.close();
    await server.close();
    if (!shared) await w.close();
  }
}
