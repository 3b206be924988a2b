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

/**
 * The jobs that store session rows (the sessions sync, its backfills, the open-session refresh
 * and the reconciliation): a run of one of them still writing holds the window of the detection
 * rules that read sessions; no other job's run does.
 */
export const SESSION_WRITING_JOBS = [
  SESSIONS_JOB,
  OPEN_REFRESH_JOB,
  RECONCILE_JOB,
] as const;

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

/**
 * The one rule of a live stream: every checkpoint stream but a backfill's. A backfill's position
 * stands inside its range, which ended in the past, so its distance from the clock says nothing
 * about how far the exporter is behind; the lag alert, the "Lag per stream" panel and /metrics
 * leave backfills out by this rule. `BACKFILL_STREAM_REGEX` is its text for SQL (`match`,
 * re2; written without backslashes, so it reads the same inside a SQL string literal, and without
 * a dollar sign, which Grafana would read as a variable), copied into
 * dashboards/provisioning/alerting/sessionhouse.yaml and dashboards/exporter-health.json;
 * test/unit/dashboards/health-rules.test.ts holds the copies to it.
 */
export const BACKFILL_STREAM_REGEX = "[.]backfill[.][0-9]+-[0-9]+";

/** True for a stream the lag of which means something: not a backfill (BACKFILL_STREAM_REGEX). */
export function isLiveStream(name: string): boolean {
  return !new RegExp(BACKFILL_STREAM_REGEX).test(name);
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
