// The detections' side of the warehouse (migrations/0026_detections.sql): a rule's query run
// through the reader with the database as the current one, the hits already recorded and new
// hits written (by the exporter's own inserts, never by a rule's SQL).
import type { Warehouse } from "./client.js";
import { ClickHouseCode, clickHouseCode } from "./clickhouse-codes.js";
import { SinkError } from "./errors.js";
import { chTime } from "./format.js";
import { insertRows, type InsertOptions } from "./insert.js";
import { checkReadStatement } from "./read-statement.js";
import { selectRows } from "./select.js";
import {
  literalBatches,
  qualified,
  quoteIdent,
  quoteString,
  stringList,
} from "./sql.js";
import { Tables } from "./tables.js";

/** One hit as the detection_hits table holds it. */
export interface DetectionHit {
  ruleId: string;
  hitKey: string;
  title: string;
  severity: string;
  attack: readonly string[];
  tags: readonly string[];
  sessionId: string;
  sessionIds: readonly string[];
  eventTimeMs: number;
  arrivedAtMs: number;
  detectedAtMs: number;
  fields: Readonly<Record<string, string>>;
  /** Whom the hit is about: a person, or the rule's group key ('' for none). */
  actor: string;
  /** The event was older than the configured age when it arrived: shown, never paged. */
  historical: boolean;
  /** The rule pages and the hit is not historical: what the compiled alerts read. */
  pages: boolean;
}

/**
 * The rows of a rule's query, read through the warehouse's reader: the engine runs it under
 * readonly = 1, after checkReadStatement has refused, before it runs, anything but one read
 * (NOT_A_READ). Whatever a rule file says, its SQL changes no table and writes no file; the hits
 * are written by the caller, from these rows. No setting goes with the query (readonly = 1
 * refuses a change of any). Table names in it are those of the configured database: the
 * embedded reader keeps session state, so USE makes the database current on it; a server
 * client sends it with every query.
 */
export async function detectionRows(
  w: Warehouse,
  sql: string,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>[]> {
  await checkReadStatement(w, sql, params);
  if (w.kind === "embedded")
    await w.reader.command({ query: `USE ${quoteIdent(w.database)}` });
  try {
    const rs = await w.reader.query({
      query: sql,
      query_params: params,
      format: "JSONEachRow",
    });
    return await rs.json<Record<string, unknown>>();
  } catch (err) {
    if (clickHouseCode(err) !== String(ClickHouseCode.READONLY)) throw err;
    throw new SinkError(
      "NOT_A_READ",
      `the engine refused it, as it runs read-only (readonly = 1): ${(err as Error).message.split("\n")[0]}`,
      {
        cause: err,
        hint: "a rule reads the tables of the database only: no write, no setting, no file(), url() or other table function that reaches outside it",
      },
    );
  }
}

/**
 * Which of `keys` already have a hit of the rule. The keys are literals of the query's text,
 * which travels in the request body: a query parameter travels in the URL, whose length a
 * server bounds (a window can hold tens of thousands of hits).
 */
export async function recordedHitKeys(
  w: Warehouse,
  ruleId: string,
  keys: readonly string[],
): Promise<Set<string>> {
  const known = new Set<string>();
  for (const batch of literalBatches(keys, quoteString)) {
    const rows = await selectRows<{ hit_key: string }>(
      w,
      `SELECT DISTINCT hit_key FROM ${qualified(w, Tables.detectionHits)}
       WHERE rule_id = {rule:String} AND hit_key IN (${stringList(batch)})`,
      { rule: ruleId },
    );
    for (const r of rows) known.add(r.hit_key);
  }
  return known;
}

export async function insertHits(
  w: Warehouse,
  hits: readonly DetectionHit[],
  options: InsertOptions,
): Promise<void> {
  if (hits.length === 0) return;
  await insertRows(
    w,
    Tables.detectionHits,
    hits.map((h) => ({
      rule_id: h.ruleId,
      hit_key: h.hitKey,
      title: h.title,
      severity: h.severity,
      attack: h.attack,
      tags: h.tags,
      session_id: h.sessionId,
      session_ids: h.sessionIds,
      event_time: chTime(h.eventTimeMs),
      arrived_at: chTime(h.arrivedAtMs),
      detected_at: chTime(h.detectedAtMs),
      fields: h.fields,
      actor: h.actor,
      historical: h.historical,
      pages: h.pages,
    })),
    options,
  );
}

/** Empties every table of the database but the migrations' own (a `detect test` scratch database). */
export async function emptyTables(w: Warehouse): Promise<void> {
  const tables = await selectRows<{ name: string }>(
    w,
    `SELECT name FROM system.tables
     WHERE database = {db:String} AND engine LIKE '%MergeTree' AND name != {keep:String}`,
    { db: w.database, keep: Tables.schemaMigrations },
  );
  for (const t of tables)
    await w.client.command({
      query: `TRUNCATE TABLE ${qualified(w, t.name)}`,
    });
}
