// The SQL of the detections (docs/detections.md): a rule's sessions in scope, a Sigma condition
// tree (parsed and checked by src/detections/sigma.ts) as a WHERE clause over sessions_enriched
// and its aggregation, and the query of a rule's Grafana alert. Every value goes in through
// quoteString.
import { sigmaField } from "./detection-fields.js";
import { quoteIdent, quoteString } from "./sql.js";
import { Tables } from "./tables.js";

/** One value test of a field. `like` holds a LIKE pattern, its own characters escaped. */
export type FieldMatch =
  | { op: "eq"; value: string; cased: boolean }
  | { op: "like"; pattern: string; cased: boolean }
  | { op: "re"; value: string }
  | { op: "cidr"; value: string }
  | { op: "num"; value: number }
  | { op: "null" }
  | { op: "exists"; present: boolean };

export type Condition =
  | { kind: "and" | "or"; parts: readonly Condition[] }
  | { kind: "not"; part: Condition }
  | { kind: "field"; field: string; match: FieldMatch };

export interface SigmaQuery {
  readonly where: Condition;
  readonly count?: {
    /** OCSF names of the grouping fields. */
    readonly by: readonly string[];
    /** Count distinct values of this OCSF field; events when undefined. */
    readonly distinct: string | undefined;
    readonly op: ">" | ">=" | "<" | "<=" | "=";
    readonly threshold: number;
    readonly timeframeSeconds: number;
  };
}

/** What a rule's SQL reads as the sessions of its window. */
export const SESSIONS_PLACEHOLDER = "{{sessions}}";

/** A condition on a row of sessions_enriched (or sessions): the row is in the window's scope. */
const IN_SCOPE_PLACEHOLDER = "{{in_scope}}";

/** An instant no session in scope started before. */
const START_BOUND_PLACEHOLDER = "{{sessions_start_bound}}";

/** Every placeholder that reads sessions: a rule with none reads another table by the window's bounds. */
export const SESSION_PLACEHOLDERS: readonly string[] = [
  SESSIONS_PLACEHOLDER,
  IN_SCOPE_PLACEHOLDER,
  START_BOUND_PLACEHOLDER,
];

/** Which sessions a window holds: those that arrived (were stored) in it, or those that started in it. */
export type Scope = "arrived" | "started";

const FROM = "{window_from:DateTime64(3, 'UTC')}";
const TO = "{window_to:DateTime64(3, 'UTC')}";

/**
 * A scope as SQL: `inScope`, the condition a row of sessions_enriched meets when it is in the
 * scope; `startBound`, an instant no session in scope started before (a bound on the sorting
 * key of `sessions`, so that only the parts and granules from there on are read).
 */
function scopeParts(
  db: string,
  scope: Scope,
): { inScope: string; startBound: string } {
  if (scope === "started")
    return {
      inScope: `start_time >= ${FROM} AND start_time < ${TO}`,
      startBound: FROM,
    };
  // A session is in the window when its latest read (the row FINAL keeps, its fetched_at) is at
  // or after the window's start. No upper bound: a session read again after the window's end
  // and stored before this read (the sessions job re-reads its lookback every minute, beside the
  // detections) has only that later read left, and a bound at the end would leave it out of this
  // window and, read again each minute, out of every later one. Read twice, it fires once (its
  // hit key is recorded); the window's end still bounds the checkpoint, since everything read
  // before the end is stored. session_keys (small, with the range of read times of each
  // granule) gives the earliest start among the keys read since the start; NULL when none was,
  // and then no session is read at all.
  const keys = `${quoteIdent(db)}.${quoteIdent(Tables.sessionKeys)}`;
  return {
    inScope: `fetched_at >= ${FROM}`,
    startBound: `(SELECT minOrNull(start_time) FROM ${keys} WHERE fetched_at >= ${FROM})`,
  };
}

/** The sessions of the window, one row per session as sessions_enriched gives it. */
function scopeSql(db: string, scope: Scope): string {
  const enriched = `${quoteIdent(db)}.${quoteIdent(Tables.sessionsEnriched)}`;
  const { inScope, startBound } = scopeParts(db, scope);
  if (scope === "started")
    return `(SELECT * FROM ${enriched} WHERE ${inScope})`;
  // The filter reaches the read of `sessions` inside the view, before its joins: the start
  // bound and the ids read in the window (the bloom filter index on id) skip the granules
  // holding no session of the window; a tuple IN on (start_time, id) costs several times more.
  const keys = `${quoteIdent(db)}.${quoteIdent(Tables.sessionKeys)}`;
  return `(SELECT * FROM ${enriched} WHERE start_time >= ${startBound} AND id IN (SELECT id FROM ${keys} WHERE ${inScope}) AND ${inScope})`;
}

/** A rule's SELECT with its sessions placeholder replaced by the sessions of the scope. */
export function scopedSelect(text: string, db: string, scope: Scope): string {
  const { inScope, startBound } = scopeParts(db, scope);
  return text
    .replaceAll(SESSIONS_PLACEHOLDER, scopeSql(db, scope))
    .replaceAll(IN_SCOPE_PLACEHOLDER, `(${inScope})`)
    .replaceAll(START_BOUND_PLACEHOLDER, startBound);
}

function fieldSql(name: string): { sql: string; kind: string } {
  const f = sigmaField(name);
  if (f === undefined)
    throw new RangeError(`no field ${name} in the field map`);
  return f.field;
}

function matchSql(x: string, kind: string, m: FieldMatch): string {
  switch (m.op) {
    case "eq":
      return m.cased
        ? `${x} = ${quoteString(m.value)}`
        : `lowerUTF8(${x}) = ${quoteString(m.value.toLowerCase())}`;
    case "like":
      return `${x} ${m.cased ? "LIKE" : "ILIKE"} ${quoteString(m.pattern)}`;
    case "re":
      return `match(${x}, ${quoteString(m.value)})`;
    case "cidr":
      return `if(isIPv4String(${x}) OR isIPv6String(${x}), isIPAddressInRange(${x}, ${quoteString(m.value)}), false)`;
    case "num":
      return `${x} = ${m.value}`;
    case "null":
      return kind === "number" ? "false" : `${x} = ''`;
    case "exists":
      return m.present
        ? kind === "number"
          ? "true"
          : `${x} != ''`
        : kind === "number"
          ? "false"
          : `${x} = ''`;
  }
}

/** A condition tree as SQL over sessions_enriched. */
function conditionSql(c: Condition): string {
  switch (c.kind) {
    case "and":
    case "or":
      return c.parts.length === 1
        ? conditionSql(c.parts[0] as Condition)
        : c.parts
            .map((p) => `(${conditionSql(p)})`)
            .join(c.kind === "and" ? " AND " : " OR ");
    case "not":
      return `NOT (${conditionSql(c.part)})`;
    case "field": {
      const f = fieldSql(c.field);
      if (f.kind !== "array") return matchSql(f.sql, f.kind, c.match);
      // A list field: null and exists speak of the list, every other test of any element.
      if (c.match.op === "null") return `empty(${f.sql})`;
      if (c.match.op === "exists")
        return c.match.present ? `notEmpty(${f.sql})` : `empty(${f.sql})`;
      return `arrayExists(x -> ${matchSql("x", "string", c.match)}, ${f.sql})`;
    }
  }
}

/** Whom a session is about: its user key, as the SQL rules name it (a row of sessions_enriched). */
const SESSION_ACTOR = "user_key";

/** The SELECT of a compiled Sigma rule over the sessions placeholder. */
export function sigmaSelect(q: SigmaQuery): string {
  const where = conditionSql(q.where);
  if (q.count === undefined)
    return `SELECT id AS session_id, start_time AS event_time, fetched_at AS arrived_at,
  ${SESSION_ACTOR} AS actor, person_email, toString(resource_name) AS resource, client_ip_address
FROM ${SESSIONS_PLACEHOLDER}
WHERE ${where}`;
  const { by, distinct, op, threshold, timeframeSeconds } = q.count;
  const bucket = `toStartOfInterval(start_time, INTERVAL ${timeframeSeconds} SECOND)`;
  const bySql = by.map((name) => `toString(${fieldSql(name).sql})`);
  const groupCols = [...by.map((_b, i) => `by_${i}`), "bucket"];
  const keyParts = [...by.map((_b, i) => `by_${i}`), "toString(bucket)"];
  // Every stored session of the groups (by value and time bucket) that a session of the window
  // falls in, in one read: a session arriving late completes its group's count.
  // The group is whom the hit is about (its actor); a count without `by` has one group.
  const actor =
    by.length === 0
      ? "''"
      : `concat(${by.map((_b, i) => `by_${i}`).join(", '|', ")})`;
  return `SELECT concat(${keyParts.join(", '|', ")}) AS hit_key, session_ids[1] AS session_id, ${actor} AS actor,
  session_ids, event_time, arrived_at, toString(n) AS count${by.map((name, i) => `, by_${i} AS ${quoteIdent(name)}`).join("")}
FROM (
  SELECT ${[...bySql.map((s, i) => `${s} AS by_${i}`), `${bucket} AS bucket`].join(", ")},
    ${distinct === undefined ? "count()" : `uniqExact(${fieldSql(distinct).sql})`} AS n,
    groupArray(100)(id) AS session_ids, min(start_time) AS event_time, max(fetched_at) AS arrived_at
  FROM ${Tables.sessionsEnriched}
  WHERE (${where})
    AND start_time >= toStartOfInterval(${START_BOUND_PLACEHOLDER}, INTERVAL ${timeframeSeconds} SECOND)
  GROUP BY ${groupCols.join(", ")}
  HAVING n ${op} ${threshold} AND countIf(${IN_SCOPE_PLACEHOLDER}) > 0
)`;
}

/**
 * The query of a rule's Grafana alert: its hits that page (not historical) recorded in the
 * alert's range, one row per actor (an alert instance, labelled `actor`) with the count of its
 * hits as the value: a burst is one instance that says how big it is.
 */
export function detectionAlertSql(ruleId: string): string {
  return [
    "SELECT actor, toFloat64(count()) AS hits",
    `FROM ${Tables.detectionHits} FINAL`,
    `WHERE rule_id = ${quoteString(ruleId)} AND pages AND $__timeFilter(detected_at)`,
    "GROUP BY actor",
  ].join("\n");
}
