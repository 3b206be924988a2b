// The parts of one ListLogAggregations answer checked against each other. An answer whose parts
// disagree is a bad answer: it replaces nothing stored, and its window stays pending with the
// reason (window-ledger.ts). Storing one of two disagreeing parts would pick an answer nobody
// gave: agg_histogram and agg_top_values keep one row per key (ReplacingMergeTree), so two
// buckets under one key, 4 and 6, would be stored as 6.
//
// Only what no correct answer can show is refused:
// - two parts under one stored key: two logsOverTime steps at the same second, two buckets with
//   the same key under the same parent, two entries with the same key in one top-value member;
// - logsOverTime steps adding up to more than numHits (every hit lies in exactly one step);
// - numHits above 0 with no step holding a count (the job always asks for logsOverTime);
// - a bucket counting more than its parent, a top value counting more than numHits (a hit counts
//   at most once in each key).
// Not refused, because a correct answer shows them: steps adding up to less than numHits, and
// sibling buckets adding up to more than their parent (a hit with several values of a
// multi-valued field counts once under each value) or to less (a hit without the field falls
// in no bucket).
import { logsOverTimeDatetimeMs } from "../api/schemas/logs.js";
import { chTimeSeconds } from "../warehouse/index.js";
import type { BucketLike, Count } from "./aggregation-rows.js";

/** The parts of an answer the checks read. */
export interface AnswerParts {
  numHits: Count;
  logsOverTime: readonly {
    datetime: string;
    count: Count;
    buckets: readonly BucketLike[];
  }[];
  members: readonly {
    member: string;
    values: readonly { key: string; count: Count }[];
  }[];
  /** Group-by fields of the job: buckets nest this deep, deeper ones are not read. */
  levels: number;
}

/** Problems found, one sentence each; at most this many are named. */
const MAX_PROBLEMS = 5;

/** What disagrees in an answer, in one sentence; undefined when its parts agree. */
export function answerDisagreement(answer: AnswerParts): string | undefined {
  const problems: string[] = [];
  const found = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const numHits = BigInt(answer.numHits);
  let total = 0n;
  const steps = new Map<string, bigint>();
  for (const entry of answer.logsOverTime) {
    const at = chTimeSeconds(logsOverTimeDatetimeMs(entry.datetime));
    const count = BigInt(entry.count);
    const earlier = steps.get(at);
    if (earlier !== undefined)
      found(`two logsOverTime steps at ${at} (counts ${earlier} and ${count})`);
    steps.set(at, count);
    total += count;
    checkBuckets(entry.buckets, count, [at], 1, answer.levels, found);
  }
  if (total > numHits)
    found(
      `the logsOverTime counts add up to ${total}, more than numHits ${numHits}`,
    );
  if (numHits > 0n && total === 0n)
    found(`numHits is ${numHits} but no logsOverTime step holds a count`);
  for (const m of answer.members) {
    const seen = new Map<string, bigint>();
    for (const v of m.values) {
      const count = BigInt(v.count);
      const earlier = seen.get(v.key);
      if (earlier !== undefined)
        found(
          `member ${m.member} lists the key ${JSON.stringify(v.key)} twice (counts ${earlier} and ${count})`,
        );
      seen.set(v.key, count);
      if (count > numHits)
        found(
          `member ${m.member} counts ${count} for the key ${JSON.stringify(v.key)}, more than numHits ${numHits}`,
        );
    }
  }
  if (problems.length === 0) return undefined;
  return `the answer's parts disagree: ${problems.join("; ")}`;
}

/** Sibling buckets at `level` under the parent at `path` (a step, then bucket keys). */
function checkBuckets(
  buckets: readonly BucketLike[],
  parentCount: bigint,
  path: readonly string[],
  level: number,
  levels: number,
  found: (problem: string) => void,
): void {
  if (level > levels) return;
  const seen = new Map<string, bigint>();
  for (const b of buckets) {
    const count = BigInt(b.count);
    const at = [...path, JSON.stringify(b.key)].join(" / ");
    const earlier = seen.get(b.key);
    if (earlier !== undefined)
      found(`two buckets at ${at} (counts ${earlier} and ${count})`);
    seen.set(b.key, count);
    if (count > parentCount)
      found(
        `the bucket at ${at} counts ${count}, more than the ${parentCount} of its parent`,
      );
    checkBuckets(
      b.buckets,
      count,
      [...path, JSON.stringify(b.key)],
      level + 1,
      levels,
      found,
    );
  }
}
