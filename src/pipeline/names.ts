// The names jobs and checkpoint streams go by in the runs, checkpoints, stream_windows and
// dead_letters tables. The scheduler, the CLI, demo and status all name them through these, so
// that a run and the stream it advances can never be named two ways.

/** The sessions job; it advances the stream of the same name. */
export const SESSIONS_JOB = "sessions";
export const SESSIONS_STREAM = SESSIONS_JOB;
/** The re-read of sessions still open (no stream of its own). */
export const OPEN_REFRESH_JOB = `${SESSIONS_JOB}.refresh`;
/** The reconciliation of the last days (moves no checkpoint). */
export const RECONCILE_JOB = `${SESSIONS_JOB}.reconcile`;

/** The evaluation of the detection rules; each rule advances its own stream (detectionStream). */
export const DETECTIONS_JOB = "detections";

/** The checkpoint stream of one detection rule: how far the arrivals it has read reach. */
export function detectionStream(ruleId: string): string {
  return `${DETECTIONS_JOB}.${ruleId}`;
}

/** The daily rollups and the legal-hold sweep. */
export const ROLLUPS_JOB = "rollups";
/**
 * The rollups' stream of session keys (session-keys.ts): every key stored before its position
 * was judged by an earlier pass, so a pass reads only the keys fetched since.
 */
export const ROLLUPS_KEYS_STREAM = `${ROLLUPS_JOB}.session_keys`;

/**
 * The aggregation streams, one per configured job: their entry in the stream catalogue
 * (stream-specs.ts) and `sessionhouse sync aggregations`.
 */
export const AGGREGATIONS = "aggregations";

/** An aggregation job's run name, which is also the name of the stream it advances. */
export function aggregationName(job: { readonly name: string }): string {
  return `${AGGREGATIONS}.${job.name}`;
}

/** What every backfill stream of `stream` starts with. */
export function backfillPrefix(stream: string): string {
  return `${stream}.backfill.`;
}

/**
 * The checkpoint stream of a backfill of `stream` over [fromMs, toMs): its own, so an
 * interrupted backfill resumes where it stopped and never moves the incremental checkpoint.
 */
export function backfillStream(
  stream: string,
  fromMs: number,
  toMs: number,
): string {
  return `${backfillPrefix(stream)}${fromMs}-${toMs}`;
}

/** The range of a backfill stream of `stream` (backfillStream), or undefined for any other name. */
export function parseBackfillStream(
  stream: string,
  name: string,
): { fromMs: number; toMs: number } | undefined {
  const prefix = backfillPrefix(stream);
  if (!name.startsWith(prefix)) return undefined;
  const m = /^(\d+)-(\d+)$/.exec(name.slice(prefix.length));
  if (!m) return undefined;
  return { fromMs: Number(m[1]), toMs: Number(m[2]) };
}

/**
 * The entity streams: one job each, named as the stream it advances, run by
 * `sessionhouse sync <stream>` and scheduled by `run`.
 */
export const ENTITY_STREAMS = [
  // Suspensions first, users next: the users stream reads the users suspensions name, and
  // the devices stream reads the devices of the users known.
  "policy_suspensions",
  "users",
  "user_devices",
  "native_users",
  "identity_links",
  "inventory",
  "clouds",
] as const;
export type EntityStream = (typeof ENTITY_STREAMS)[number];

/**
 * Every stream of the catalogue (stream-specs.ts), in the order `run` schedules them: sessions,
 * the aggregation jobs' streams, then the entity streams.
 */
export const STREAMS = [
  SESSIONS_STREAM,
  AGGREGATIONS,
  ...ENTITY_STREAMS,
] as const;
export type StreamName = (typeof STREAMS)[number];
