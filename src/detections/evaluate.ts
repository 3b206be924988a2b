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
import { DETECTIONS_JOB, detectionStream } from "../pipeline/names.js";
import type { Rule } from "./rule.js";
import { checkRules, findHits, type Window } from "./query.js";

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
  nowMs: number,
): Promise<DetectionHit[]> {
  const hits = await newHits(
    w,
    rule.id,
    await findHits(w, rule, window, nowMs),
  );
  await insertHits(w, hits, insert);
  return hits;
}

export interface EvaluationResult {
  rule: string;
  window: Window | undefined;
  hits: number;
}

/**
 * One evaluation of every rule: the window of each from its checkpoint (or `initialLookbackMs`
 * before the end, the first time) to the end of what is stored; hits recorded before the
 * checkpoint moves. Every rule is checked to be one read first (checkRules).
 */
export async function evaluateRules(
  w: Warehouse,
  rules: readonly Rule[],
  options: { insert: InsertOptions; initialLookbackMs: number; nowMs: number },
): Promise<EvaluationResult[]> {
  // A rule whose SQL is not a read stops the evaluation before any rule runs or records.
  await checkRules(w, rules, "arrived");
  const running = await earliestRunningStart(w, DETECTIONS_JOB, options.nowMs);
  const endMs = Math.min(options.nowMs, running ?? options.nowMs);
  const results: EvaluationResult[] = [];
  for (const rule of rules) {
    const stream = detectionStream(rule.id);
    const cp = await readCheckpoint(w, stream);
    const fromMs = cp?.positionMs ?? endMs - options.initialLookbackMs;
    if (fromMs >= endMs) {
      results.push({ rule: rule.id, window: undefined, hits: 0 });
      continue;
    }
    const window: Window = { fromMs, toMs: endMs, scope: "arrived" };
    const hits = await recordWindow(
      w,
      rule,
      window,
      options.insert,
      options.nowMs,
    );
    await writeCheckpoint(
      w,
      stream,
      endMs,
      { hits: hits.length },
      options.insert,
    );
    results.push({ rule: rule.id, window, hits: hits.length });
  }
  return results;
}
