// What a sync should have stored, read independently of the exporter (plain fetch against a
// simulator, usually a fault-free twin of the one the exporter read), and the comparisons the
// fault tests make: sessions field by field, dead letters by raw text and reason, histogram
// counts, top values and hit counts window by window.
import { isDeepStrictEqual } from "node:util";
import type { AggregationJobConfig } from "../../src/config/index.js";
import type {
  BadDatesVariant,
  BrokenRecord,
  BrokenRecordKind,
  FaultedRecord,
  Simulator,
} from "../../src/simulator/index.js";
import type { Warehouse } from "../../src/warehouse/client.js";
import { fromChTime } from "../../src/warehouse/format.js";
import { API_KEY } from "./simulator.js";
import { select } from "./warehouse.js";

export type WireRecord = Record<string, unknown>;

async function call(
  sim: Pick<Simulator, "url">,
  procedure: string,
  body: unknown,
  apiKey = API_KEY,
): Promise<unknown> {
  const res = await fetch(`${sim.url}/core.v1.${procedure}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status !== 200)
    throw new Error(`${procedure}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Every session of [fromMs, toMs), by id, in pages small enough to keep memory flat. */
export async function readSessions(
  sim: Pick<Simulator, "url">,
  fromMs: number,
  toMs: number,
  apiKey = API_KEY,
): Promise<Map<string, WireRecord>> {
  const out = new Map<string, WireRecord>();
  let cursor: string | undefined;
  for (;;) {
    const page = (await call(
      sim,
      "SessionsService/ListSessionsV2",
      {
        limit: 20_000,
        startTimestamp: String(fromMs / 1000),
        endTimestamp: String(toMs / 1000),
        ...(cursor ? { cursor } : {}),
      },
      apiKey,
    )) as { sessions?: WireRecord[]; listMetadata?: { nextCursor?: string } };
    for (const s of page.sessions ?? []) out.set(s.id as string, s);
    cursor = page.listMetadata?.nextCursor;
    if (!cursor) return out;
  }
}

export interface StoredSession {
  id: string;
  start_time: string;
  end_time: string | null;
  session_status: string;
  raw: string;
}

export async function storedSessions(
  w: Warehouse,
): Promise<{ rows: Map<string, StoredSession>; finalRows: number }> {
  const rows = await select<StoredSession>(
    w,
    "SELECT id, start_time, end_time, session_status, raw FROM {db}.sessions FINAL",
  );
  return { rows: new Map(rows.map((r) => [r.id, r])), finalRows: rows.length };
}

/**
 * Differences between what is stored and what the service holds, as readable lines (empty when
 * equal): every unbroken session stored once with its raw record and mapped state, no broken
 * one stored, nothing else stored.
 */
export function sessionDifferences(
  expected: ReadonlyMap<string, WireRecord>,
  stored: ReadonlyMap<string, StoredSession>,
  brokenIds: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const [id, e] of expected) {
    const row = stored.get(id);
    if (brokenIds.has(id)) {
      if (row) out.push(`${id}: broken on the wire but stored`);
      continue;
    }
    if (!row) {
      out.push(`${id}: missing`);
      continue;
    }
    if (!isDeepStrictEqual(JSON.parse(row.raw), e))
      out.push(`${id}: raw differs`);
    if (row.session_status !== e.sessionStatus)
      out.push(
        `${id}: status ${row.session_status}, expected ${String(e.sessionStatus)}`,
      );
    if (fromChTime(row.start_time) !== Date.parse(e.startTime as string))
      out.push(`${id}: start_time differs`);
    const end = row.end_time === null ? undefined : fromChTime(row.end_time);
    const expectedEnd =
      typeof e.endTime === "string" ? Date.parse(e.endTime) : undefined;
    if (end !== expectedEnd)
      out.push(
        `${id}: end_time ${String(row.end_time)}, expected ${String(e.endTime)}`,
      );
  }
  for (const id of stored.keys())
    if (!expected.has(id))
      out.push(`${id}: stored but not in the service's data`);
  return out;
}

/** How each kind of broken record must be explained in dead_letters.reason. */
export const REASON_OF_KIND: Readonly<Record<BrokenRecordKind, RegExp>> = {
  missingId: /^id: session has no id$/,
  numericStartTime: /^startTime: .*expected string, received number/,
  invalidStartTime: /^startTime: expected an RFC 3339 timestamp$/,
};

export interface StoredDeadLetter {
  record_id: string;
  reason: string;
  raw: string;
  seen_at: string;
}

export async function storedDeadLetters(
  w: Warehouse,
  job: string,
): Promise<StoredDeadLetter[]> {
  return select<StoredDeadLetter>(
    w,
    "SELECT record_id, reason, raw, toString(seen_at) AS seen_at FROM {db}.dead_letters FINAL WHERE job = {job:String}",
    { job },
  );
}

/** Differences between the dead letters and the records the simulator broke on purpose. */
export function deadLetterDifferences(
  stored: readonly StoredDeadLetter[],
  broken: readonly BrokenRecord[],
): string[] {
  const out: string[] = [];
  const byRaw = new Map(stored.map((d) => [d.raw, d]));
  if (byRaw.size !== stored.length)
    out.push(`${stored.length - byRaw.size} dead letters stored twice`);
  for (const b of broken) {
    const d = byRaw.get(b.raw);
    if (!d) {
      out.push(`${b.sessionId} (${b.kind}): not dead-lettered`);
      continue;
    }
    if (!REASON_OF_KIND[b.kind].test(d.reason))
      out.push(`${b.sessionId} (${b.kind}): reason "${d.reason}"`);
    const id = b.kind === "missingId" ? "" : b.sessionId;
    if (d.record_id !== id)
      out.push(`${b.sessionId}: record_id "${d.record_id}"`);
  }
  const brokenRaw = new Set(broken.map((b) => b.raw));
  for (const d of stored)
    if (!brokenRaw.has(d.raw))
      out.push(`unexpected dead letter ${d.record_id}: ${d.reason}`);
  return out;
}

/** How each impossible value of a badDates record must be explained in dead_letters.reason. */
export const REASON_OF_BAD_DATES: Readonly<Record<BadDatesVariant, RegExp>> = {
  impossibleDate: /^startTime: .*(calendar|not a valid date|does not exist)/i,
  year1800: /^startTime: .*(1900|range)/i,
  year2400: /^(startTime|endTime): .*(2299|range)/i,
  negativeDuration: /^duration: .*negative/i,
};

/** The reason a record broken on purpose must carry in dead_letters. */
export function reasonOfFault(f: FaultedRecord): RegExp {
  switch (f.kind) {
    case "badUtf8":
      return /invalid UTF-8/i;
    case "hugeRecord":
      return /record of \d+ bytes.*(limit|larger|exceeds|maximum)/i;
    case "badDates":
      return REASON_OF_BAD_DATES[f.variant as BadDatesVariant];
    default:
      return REASON_OF_KIND[f.kind];
  }
}

/** dead_letters.raw of a faulted record: its text, or for invalid UTF-8 its bytes in base64. */
export function deadLetterRaw(f: FaultedRecord): string {
  return f.kind === "badUtf8" ? f.bytes.toString("base64") : f.raw;
}

/**
 * Differences between the dead letters and every record the simulator broke on purpose
 * (sim.faultedRecords()): each dead-lettered once with its exact raw text (base64 bytes for
 * invalid UTF-8), its session id (empty when the id is what is missing) and a reason naming the
 * problem; nothing else dead-lettered.
 */
export function faultedDeadLetterDifferences(
  stored: readonly StoredDeadLetter[],
  faulted: readonly FaultedRecord[],
): string[] {
  const out: string[] = [];
  const byRaw = new Map(stored.map((d) => [d.raw, d]));
  if (byRaw.size !== stored.length)
    out.push(`${stored.length - byRaw.size} dead letters stored twice`);
  const wanted = new Set<string>();
  for (const f of faulted) {
    const raw = deadLetterRaw(f);
    wanted.add(raw);
    const d = byRaw.get(raw);
    const what = `${f.sessionId} (${f.kind}${f.variant === f.kind ? "" : `/${f.variant}`})`;
    if (!d) {
      out.push(`${what}: not dead-lettered`);
      continue;
    }
    if (!reasonOfFault(f).test(d.reason))
      out.push(`${what}: reason "${d.reason}"`);
    const id = f.kind === "missingId" ? "" : f.sessionId;
    if (d.record_id !== id) out.push(`${what}: record_id "${d.record_id}"`);
  }
  for (const d of stored)
    if (!wanted.has(d.raw))
      out.push(`unexpected dead letter ${d.record_id}: ${d.reason}`);
  return out;
}

/** One window of an aggregation job as the API answers it, flattened like agg_* rows. */
export interface AggregationWindow {
  histogram: Map<string, number>;
  top: Map<string, number>;
  numHits: number;
}

const secondsText = (ms: number) =>
  new Date(ms).toISOString().slice(0, 19).replace("T", " ");

export async function apiAggregationWindow(
  sim: Pick<Simulator, "url">,
  job: AggregationJobConfig,
  fromMs: number,
  toMs: number,
): Promise<AggregationWindow> {
  const json = (await call(sim, "LogsService/ListLogAggregations", {
    query: job.query,
    histogramInterval: job.interval,
    histogramGroupByFields: job.groupBy,
    startTimestamp: String(fromMs / 1000),
    endTimestamp: String(toMs / 1000),
  })) as {
    numHits?: string;
    aggregations?: Record<string, unknown> & {
      logsOverTime?: (Bucket & { datetime: string })[];
    };
  };
  type Bucket = { key?: string; count?: number; buckets?: Bucket[] };
  const histogram = new Map<string, number>();
  const walk = (t: string, buckets: Bucket[] | undefined, keys: string[]) => {
    for (const b of buckets ?? []) {
      const path = [...keys, b.key ?? ""];
      if ((b.count ?? 0) > 0)
        histogram.set(
          [t, path.length, ...path, "", "", ""].slice(0, 5).join("|"),
          b.count ?? 0,
        );
      walk(t, b.buckets, path);
    }
  };
  const aggregations = json.aggregations ?? {};
  for (const e of aggregations.logsOverTime ?? []) {
    const t = secondsText(
      /^\d+$/.test(e.datetime) ? Number(e.datetime) : Date.parse(e.datetime),
    );
    if ((e.count ?? 0) > 0)
      histogram.set([t, 0, "", "", ""].join("|"), e.count ?? 0);
    walk(t, e.buckets, []);
  }
  const top = new Map<string, number>();
  for (const [member, values] of Object.entries(aggregations)) {
    if (member === "logsOverTime" || !Array.isArray(values)) continue;
    for (const v of values as { key?: string; count?: number }[])
      if ((v.count ?? 0) > 0) top.set(`${member}|${v.key ?? ""}`, v.count ?? 0);
  }
  return { histogram, top, numHits: Number(json.numHits ?? 0) };
}

/** The histogram rows of `job` stored with a bucket in [from, to) (FINAL, zero counts left out). */
function storedHistogram(
  w: Warehouse,
  params: { job: string; from: number; to: number },
) {
  return select<{
    t: string;
    level: number;
    key1: string;
    key2: string;
    key3: string;
    count: string;
  }>(
    w,
    `SELECT toString(bucket_time) AS t, level, key1, key2, key3, count FROM {db}.agg_histogram FINAL
     WHERE job = {job:String} AND count > 0
       AND bucket_time >= fromUnixTimestamp64Milli({from:Int64}) AND bucket_time < fromUnixTimestamp64Milli({to:Int64})`,
    params,
  );
}

/** The same window as stored (FINAL, zero counts left out: they mark vanished keys). */
export async function storedAggregationWindow(
  w: Warehouse,
  job: AggregationJobConfig,
  fromMs: number,
  toMs: number,
): Promise<AggregationWindow> {
  const params = { job: job.name, from: fromMs, to: toMs };
  const hist = await storedHistogram(w, params);
  const top = await select<{ member: string; key: string; count: string }>(
    w,
    `SELECT member, key, count FROM {db}.agg_top_values FINAL
     WHERE job = {job:String} AND count > 0 AND window_start = fromUnixTimestamp64Milli({from:Int64})`,
    params,
  );
  const [win] = await select<{ num_hits: string }>(
    w,
    `SELECT num_hits FROM {db}.agg_windows FINAL WHERE job = {job:String} AND window_start = fromUnixTimestamp64Milli({from:Int64})`,
    params,
  );
  return {
    histogram: new Map(
      hist.map((r) => [
        [r.t, r.level, r.key1, r.key2, r.key3].join("|"),
        Number(r.count),
      ]),
    ),
    top: new Map(top.map((r) => [`${r.member}|${r.key}`, Number(r.count)])),
    numHits: Number(win?.num_hits ?? -1),
  };
}

/**
 * Every window of `windows` (contiguous, in order) as stored, like storedAggregationWindow, in
 * three queries for the whole range instead of three per window; a row stored for a window
 * start that is not among them is listed in `unplanned`.
 */
export async function storedAggregationWindows(
  w: Warehouse,
  job: AggregationJobConfig,
  windows: readonly { startMs: number; endMs: number }[],
): Promise<{ byStart: Map<number, AggregationWindow>; unplanned: string[] }> {
  const params = {
    job: job.name,
    from: windows[0]?.startMs ?? 0,
    to: windows.at(-1)?.endMs ?? 0,
  };
  const byStart = new Map<number, AggregationWindow>(
    windows.map((win) => [
      win.startMs,
      { histogram: new Map(), top: new Map(), numHits: -1 },
    ]),
  );
  const unplanned: string[] = [];
  const at = (startMs: number, what: string) => {
    const win = byStart.get(startMs);
    if (!win) unplanned.push(`${job.name}: ${what} stored at ${startMs}`);
    return win;
  };
  const startOf = (ms: number) =>
    windows.find((win) => ms >= win.startMs && ms < win.endMs)?.startMs ?? ms;
  const hist = await storedHistogram(w, params);
  for (const r of hist)
    at(startOf(fromChTime(r.t)), "histogram")?.histogram.set(
      [r.t, r.level, r.key1, r.key2, r.key3].join("|"),
      Number(r.count),
    );
  const top = await select<{
    ws: string;
    member: string;
    key: string;
    count: string;
  }>(
    w,
    `SELECT toString(window_start) AS ws, member, key, count FROM {db}.agg_top_values FINAL
     WHERE job = {job:String} AND count > 0
       AND window_start >= fromUnixTimestamp64Milli({from:Int64}) AND window_start < fromUnixTimestamp64Milli({to:Int64})`,
    params,
  );
  for (const r of top)
    at(fromChTime(r.ws), "top value")?.top.set(
      `${r.member}|${r.key}`,
      Number(r.count),
    );
  const hits = await select<{ ws: string; num_hits: string }>(
    w,
    `SELECT toString(window_start) AS ws, num_hits FROM {db}.agg_windows FINAL
     WHERE job = {job:String}
       AND window_start >= fromUnixTimestamp64Milli({from:Int64}) AND window_start < fromUnixTimestamp64Milli({to:Int64})`,
    params,
  );
  for (const r of hits) {
    const win = at(fromChTime(r.ws), "num_hits");
    if (win) win.numHits = Number(r.num_hits);
  }
  return { byStart, unplanned };
}

export function mapDifferences(
  what: string,
  got: ReadonlyMap<string, number>,
  want: ReadonlyMap<string, number>,
): string[] {
  const out: string[] = [];
  for (const [k, v] of want)
    if (got.get(k) !== v)
      out.push(`${what} ${k}: stored ${String(got.get(k))}, API ${v}`);
  for (const [k, v] of got)
    if (!want.has(k)) out.push(`${what} ${k}: stored ${v}, not in the API`);
  return out;
}
