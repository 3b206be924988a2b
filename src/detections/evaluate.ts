// Windows on arrival: each rule reads the sessions that arrived (were stored) since its own
// checkpoint, records the hits it has not recorded before, then moves its checkpoint. The end of
// a window is never past what is stored: not past the start of a run still writing (its rows
// are fetched after it started), nor past now. A session stored an hour late arrives in a later
// window and fires then, once; a session read again fires no second time (its hit key is
// recorded). docs/detections.md, "Windows on arrival".
import type { InsertOptions, Warehouse } from "../warehouse/index.js";
import {
  earliestRunningStart,
  insertHits,
  readCheckpoint,
  recordedHitKeys,
  writeCheckpoint,
  type DetectionHit,
} from "../warehouse/index.js";
import {
  DETECTIONS_JOB,
  SESSION_WRITING_JOBS,
  detectionStream,
} from "../pipeline/names.js";
import type { Rule } from "./rule.js";
import {
  checkRules,
  findHits,
  readsSessions,
  type HitClock,
  type Window,
} from "./query.js";
import { DEFAULT_HISTORICAL_AFTER_MS } from "./history.js";

/** Hits of `found` whose key the table does not hold yet (and each key once). */
async function newHits(
  w: Warehouse,
  ruleId: string,
  found: readonly DetectionHit[],
): Promise<DetectionHit[]> {
  const known = await recordedHitKeys(w, ruleId, [
    ...new Set(found.map((h) => h.hitKey)),
  ]);
  const fresh = new Map<string, DetectionHit>();
  for (const h of found)
    if (!known.has(h.hitKey) && !fresh.has(h.hitKey)) fresh.set(h.hitKey, h);
  return [...fresh.values()];
}

/** Finds the rule's hits in a window and records the new ones; returns them. */
export async function recordWindow(
  w: Warehouse,
  rule: Rule,
  window: Window,
  insert: InsertOptions,
  at: HitClock,
): Promise<DetectionHit[]> {
  const hits = await newHits(w, rule.id, await findHits(w, rule, window, at));
  await insertHits(w, hits, insert);
  return hits;
}

export interface EvaluationResult {
  rule: string;
  window: Window | undefined;
  hits: number;
  /** Of `hits`, those marked historical (never paged). */
  historical: number;
}

/** What an evaluation needs: how to insert, the first window's reach, the clock and the age of history. */
export interface EvaluationOptions {
  insert: InsertOptions;
  initialLookbackMs: number;
  nowMs: number;
  /** historicalAfterMs(config); default the sessions lookback's default. */
  historicalAfterMs?: number | undefined;
}

/** The evaluation's clock and age of history, as the hits are judged by them. */
const hitClock = (options: EvaluationOptions): HitClock => ({
  nowMs: options.nowMs,
  historicalAfterMs: options.historicalAfterMs ?? DEFAULT_HISTORICAL_AFTER_MS,
});

const historicalCount = (hits: readonly DetectionHit[]): number =>
  hits.filter((h) => h.historical).length;

/**
 * One evaluation of every rule: the window of each from its checkpoint (or `initialLookbackMs`
 * before the end, the first time) to the end of what is stored; hits recorded before the
 * checkpoint moves. Every rule is checked to be one read first (checkRules).
 */
export async function evaluateRules(
  w: Warehouse,
  rules: readonly Rule[],
  options: EvaluationOptions,
): Promise<EvaluationResult[]> {
  const at = hitClock(options);
  // A rule whose SQL is not a read stops the evaluation before any rule runs or records.
  await checkRules(w, rules, "arrived");
  // A rule that reads sessions waits only for the runs that store sessions (an aggregation
  // backfill or a directory stream never holds it back); a rule that reads another table waits
  // for every run still writing.
  const ends = await windowEnds(w, options.nowMs);
  const results: EvaluationResult[] = [];
  for (const rule of rules) {
    const endMs = readsSessions(rule) ? ends.sessions : ends.any;
    const stream = detectionStream(rule.id);
    const cp = await readCheckpoint(w, stream);
    const fromMs = cp?.positionMs ?? endMs - options.initialLookbackMs;
    if (fromMs >= endMs) {
      results.push({
        rule: rule.id,
        window: undefined,
        hits: 0,
        historical: 0,
      });
      continue;
    }
    const window: Window = { fromMs, toMs: endMs, scope: "arrived" };
    const result = await windowResult(w, rule, window, options.insert, at);
    await writeCheckpoint(
      w,
      stream,
      endMs,
      { hits: result.hits },
      options.insert,
    );
    results.push(result);
  }
  return results;
}

/** A rule's window recorded: how many hits it found, how many of them historical. */
async function windowResult(
  w: Warehouse,
  rule: Rule,
  window: Window,
  insert: InsertOptions,
  at: HitClock,
): Promise<EvaluationResult> {
  const hits = await recordWindow(w, rule, window, insert, at);
  return {
    rule: rule.id,
    window,
    hits: hits.length,
    historical: historicalCount(hits),
  };
}

/**
 * The hits of what a backfill stored: every rule that reads sessions, over the sessions that
 * arrived since the backfill's run started (`fromMs`), recorded as the detections job records
 * them. Its events are older than the age of history when they arrive, so their hits are
 * historical; a backfill reaching into the last `historicalAfterMs` finds the rest as any sync
 * would. No checkpoint moves: the job reads these sessions again and records nothing more.
 */
export async function recordBackfillHits(
  w: Warehouse,
  rules: readonly Rule[],
  options: EvaluationOptions & { fromMs: number },
): Promise<EvaluationResult[]> {
  const sessionRules = rules.filter(readsSessions);
  await checkRules(w, sessionRules, "arrived");
  const at = hitClock(options);
  const window: Window = {
    fromMs: options.fromMs,
    toMs: options.nowMs + 1,
    scope: "arrived",
  };
  const results: EvaluationResult[] = [];
  for (const rule of sessionRules)
    results.push(await windowResult(w, rule, window, options.insert, at));
  return results;
}

/** How long the detections job waits for a run storing sessions to end before it reads. */
export const SESSION_WRITERS_WAIT_MS = 20_000;

/**
 * Waits until no run that stores sessions is running, polling every 250 ms, for at most `maxMs`
 * or until `signal` aborts: the sessions job and the detections tick on the same minute, and a
 * sessions run that ends within the wait (a minute of sessions takes a second or two) is read by
 * this evaluation instead of the next one, a minute later. A run still going when the wait ends
 * (an open-session refresh of thousands) holds the window's end at its start, as ever.
 */
export async function waitForSessionWriters(
  w: Warehouse,
  maxMs: number,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (signal?.aborted !== true) {
    const now = Date.now();
    const running = await earliestRunningStart(
      w,
      DETECTIONS_JOB,
      now,
      SESSION_WRITING_JOBS,
    );
    if (running === undefined || now >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Where the windows end: never past now, nor past the start of a run still writing. */
async function windowEnds(
  w: Warehouse,
  nowMs: number,
): Promise<{ sessions: number; any: number }> {
  const any = await earliestRunningStart(w, DETECTIONS_JOB, nowMs);
  const sessions = await earliestRunningStart(
    w,
    DETECTIONS_JOB,
    nowMs,
    SESSION_WRITING_JOBS,
  );
  return {
    sessions: Math.min(nowMs, sessions ?? nowMs),
    any: Math.min(nowMs, any ?? nowMs),
  };
}
