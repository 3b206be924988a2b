// A rule as the SELECT that finds its hits in a window, and its rows as hits. The contract of a
// rule's SQL (docs/detections.md, "SQL rules"): it reads `{{sessions}}`, the sessions in scope
// (those that arrived in the window when the detections job runs, those that started in the
// range of a hunt), may read any other table of the database, and may use the window's bounds
// as the parameters {window_from:DateTime64(3, 'UTC')} and {window_to:DateTime64(3, 'UTC')}.
// It returns `session_id` and `event_time`, optionally `hit_key` (default: the session id),
// `session_ids` and `arrived_at`; every other column is kept as a field of the hit. It is one
// read: checked on the engine's own parse (checkReadStatement) and run on the warehouse's reader,
// which the engine holds to readonly = 1; the hits are written by the exporter's own inserts.
import { FatalError } from "../util/errors.js";
import {
  checkReadStatement,
  chTime,
  detectionRows,
  scopedSelect,
  SESSIONS_PLACEHOLDER,
  SESSION_PLACEHOLDERS,
  sigmaSelect,
  type DetectionHit,
  type Scope,
  type SigmaQuery,
  type Warehouse,
} from "../warehouse/index.js";
import { DetectionRuleError, RuleNotAReadError, type Rule } from "./rule.js";
import { compileSigma } from "./sigma.js";
import { isHistorical, rulePages } from "./history.js";

export interface Window {
  readonly fromMs: number;
  readonly toMs: number;
  readonly scope: Scope;
}

const RESERVED = new Set([
  "hit_key",
  "session_id",
  "session_ids",
  "event_time",
  "arrived_at",
  "actor",
]);

/** The rule's Sigma compiled, once (its errors name the rule's file and line). */
const compiledCache = new WeakMap<Rule, SigmaQuery>();
function compiledSigmaOf(rule: Rule): SigmaQuery | undefined {
  if (rule.logic.kind !== "sigma") return undefined;
  let c = compiledCache.get(rule);
  if (c === undefined) {
    c = compileSigma(rule.logic.src, rule.logic.path, rule.id);
    compiledCache.set(rule, c);
  }
  return c;
}

/** The SELECT of a rule, `{{sessions}}` replaced by the sessions of the scope. */
export function ruleSql(rule: Rule, db: string, scope: Scope): string {
  const text =
    rule.logic.kind === "sql"
      ? rule.logic.sql
      : sigmaSelect(compiledSigmaOf(rule) as SigmaQuery);
  const scoped = scopedSelect(text, db, scope);
  // A rule that reads no session reads another table by the window's bounds.
  if (!scoped.includes("{window_from:"))
    throw new DetectionRuleError(
      `${rule.file}:1: rule ${rule.id}: its sql reads neither ${SESSIONS_PLACEHOLDER} nor {window_from:…}`,
      {
        hint: `read the sessions of the window as FROM ${SESSIONS_PLACEHOLDER}; docs/detections.md, "SQL rules"`,
      },
    );
  return scoped;
}

/** Whether a rule reads sessions (a Sigma rule always does), rather than another table by the window's bounds. */
export function readsSessions(rule: Rule): boolean {
  if (rule.logic.kind === "sigma") return true;
  const { sql } = rule.logic;
  return SESSION_PLACEHOLDERS.some((p) => sql.includes(p));
}

/** The window's bounds, the parameters of a rule's query. */
function windowParams(window: Window): Record<string, string> {
  return {
    window_from: chTime(window.fromMs),
    window_to: chTime(window.toMs),
  };
}

/** The line of a rule's logic: its `sql:`, or the Sigma rule's first line. */
function logicLine(rule: Rule): number {
  return rule.logic.kind === "sql" ? rule.logic.line : 1;
}

/** A rule refused as its SQL is not one read (NOT_A_READ), naming the file, line and rule. */
function refusedRule(rule: Rule, err: FatalError): RuleNotAReadError {
  return new RuleNotAReadError(
    `${rule.file}:${logicLine(rule)}: rule ${rule.id}: not run, as a rule may only read: ${err.message}`,
    {
      cause: err,
      hint: `make the rule's sql one SELECT over ${SESSIONS_PLACEHOLDER} (no INSERT, ALTER, DROP, TRUNCATE, OPTIMIZE, SYSTEM, KILL, SET, SETTINGS, INTO OUTFILE, file() or second statement), or remove the file; docs/detections.md, "SQL rules"`,
    },
  );
}

const isNotARead = (err: unknown): err is FatalError =>
  err instanceof FatalError && err.code === "NOT_A_READ";

/**
 * Refuses, before any of them runs, a rule whose SQL (its own, or its Sigma rule compiled) is
 * not one read (checkReadStatement, on the engine's own parse): a write, DDL, SYSTEM, KILL, INTO
 * OUTFILE, a SETTINGS clause, two statements. Every evaluation checks its rule again and runs it
 * on the reader, which the engine holds to readonly = 1.
 */
export async function checkRules(
  w: Warehouse,
  rules: readonly Rule[],
  scope: Scope,
): Promise<void> {
  const params = windowParams({ fromMs: 0, toMs: 1, scope });
  for (const rule of rules) {
    try {
      await checkReadStatement(w, ruleSql(rule, w.database, scope), params);
    } catch (err) {
      throw isNotARead(err) ? refusedRule(rule, err) : err;
    }
  }
}

/**
 * What a rule found in a window, as hits (not yet compared with those recorded): its SQL read
 * through the warehouse's reader, never written by it.
 */
export async function findHits(
  w: Warehouse,
  rule: Rule,
  window: Window,
  at: HitClock,
): Promise<DetectionHit[]> {
  const sql = ruleSql(rule, w.database, window.scope);
  let rows;
  try {
    rows = await detectionRows(w, sql, windowParams(window));
  } catch (err) {
    if (isNotARead(err)) throw refusedRule(rule, err);
    throw new DetectionRuleError(
      `${rule.file}:${logicLine(rule)}: rule ${rule.id}: its query failed: ${(err as Error).message.split("\n")[0]}`,
      {
        cause: err,
        hint: "run the rule with `sessionhouse detect run --rule ID` and check its SQL against docs/detections.md",
      },
    );
  }
  const pages = rulePages(rule);
  return rows.map((row) => hitOf(rule, row, window, at, pages));
}

/** When hits are found, and the age past which an event is history on arrival. */
export interface HitClock {
  readonly nowMs: number;
  readonly historicalAfterMs: number;
}

/**
 * When a hit's data arrived: the rule's `arrived_at`; else, for a window of arrivals, its
 * start (the earliest it can have arrived, so a rule without the column is never taken for
 * history it is not); else, in a hunt, its event time.
 */
function arrivalOf(
  row: Record<string, unknown>,
  window: Window,
  eventTimeMs: number,
): number {
  if (typeof row.arrived_at === "string") return chMs(row.arrived_at);
  return window.scope === "arrived" ? window.fromMs : eventTimeMs;
}

const chMs = (t: string): number => Date.parse(t.replace(" ", "T") + "Z");

function hitOf(
  rule: Rule,
  row: Record<string, unknown>,
  window: Window,
  at: HitClock,
  pages: boolean,
): DetectionHit {
  const sessionId = row.session_id;
  const eventTime = row.event_time;
  if (typeof sessionId !== "string" || typeof eventTime !== "string")
    throw new DetectionRuleError(
      `${rule.file}:1: rule ${rule.id}: its query must return the columns session_id (String) and event_time (DateTime64)`,
      {
        hint: 'docs/detections.md, "SQL rules"',
      },
    );
  const hitKey =
    typeof row.hit_key === "string" && row.hit_key !== ""
      ? row.hit_key
      : sessionId;
  if (hitKey === "")
    throw new DetectionRuleError(
      `${rule.file}:1: rule ${rule.id}: a row has neither session_id nor hit_key`,
      {
        hint: "a hit about no single session needs a hit_key",
      },
    );
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(row))
    if (!RESERVED.has(k))
      fields[k] = typeof v === "string" ? v : JSON.stringify(v);
  const ids = Array.isArray(row.session_ids)
    ? row.session_ids.map(String)
    : sessionId
      ? [sessionId]
      : [];
  const eventTimeMs = chMs(eventTime);
  const arrivedAtMs = arrivalOf(row, window, eventTimeMs);
  const historical = isHistorical(
    eventTimeMs,
    arrivedAtMs,
    at.historicalAfterMs,
  );
  return {
    ruleId: rule.id,
    hitKey,
    title: rule.title,
    severity: rule.severity,
    attack: rule.attack,
    tags: rule.tags,
    sessionId,
    sessionIds: ids,
    eventTimeMs,
    arrivedAtMs,
    detectedAtMs: at.nowMs,
    fields,
    actor: typeof row.actor === "string" ? row.actor : "",
    historical,
    pages: pages && !historical,
  };
}
