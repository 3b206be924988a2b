// The simulated `/core.v1.LogsService/ListLogAggregations` route: request validation as the
// real service does it (docs/control-plane-wire.md, "Log aggregations"), then aggregate.ts over events.ts.
//
// The window is [startTimestamp, endTimestamp) capped at the clock's now: events after now do
// not exist yet, so asking the same window again later may return more (late data), never less.

import {
  parseRequestTimestamp,
  SimConnectError,
  truncateForMessage,
} from "../connect.js";
import {
  aggregateLogs,
  stepCount,
  type ListLogAggregationsResponse,
} from "./aggregate.js";
import { LogEventStore, type LogSessionSource } from "./events.js";
import {
  isLogField,
  LOG_FIELDS,
  MEMBER_OF_FIELD,
  type AggregatedField,
  type LogField,
} from "./fields.js";
import {
  compileQuery,
  parseQuery,
  QuerySyntaxError,
  type EventPredicate,
} from "./query.js";

export const LIST_LOG_AGGREGATIONS_PATH =
  "/core.v1.LogsService/ListLogAggregations";

/** At most this many `histogramGroupByFields` (docs/control-plane-wire.md, "Log aggregations"). */
const MAX_GROUP_BY_FIELDS = 3;
/** Histograms with more steps than this are refused, as an Elasticsearch-style engine would. */
const MAX_HISTOGRAM_STEPS = 100_000;
const DEFAULT_HISTOGRAM_INTERVAL = "1h";
const DEFAULT_TOP_N = 10;

type AggregationMode = "field_aggregations_only" | "logs_over_time_only";

export interface LogsHandlerOptions {
  /** Keys per top-value member (default 10); the real service's number is unknown. */
  topN?: number;
  /** Sessions whose generated events stay cached, per session source (default 30 000). */
  cacheSessions?: number;
}

/** What the route needs from the server's handler context. */
export interface LogsRouteContext {
  readonly nowMs: number;
  readonly generator: LogSessionSource;
  readonly seed: number;
}

interface ParsedLogAggregationsRequest {
  startMs: number;
  endMs: number;
  intervalMs: number;
  groupBy: LogField[];
  mode: AggregationMode | undefined;
  predicate: EventPredicate;
}

export function createListLogAggregationsHandler(
  opts: LogsHandlerOptions = {},
): (
  body: Record<string, unknown>,
  ctx: LogsRouteContext,
) => ListLogAggregationsResponse {
  const topN = opts.topN ?? DEFAULT_TOP_N;
  if (!Number.isInteger(topN) || topN < 1)
    throw new RangeError(`topN must be a positive integer, got ${topN}`);
  // One store per session source: the cache belongs to the org it was generated from.
  const stores = new WeakMap<LogSessionSource, LogEventStore>();
  const storeFor = (ctx: LogsRouteContext): LogEventStore => {
    let store = stores.get(ctx.generator);
    if (store === undefined || store.seed !== ctx.seed) {
      store = new LogEventStore(ctx.generator, {
        seed: ctx.seed,
        ...(opts.cacheSessions === undefined
          ? {}
          : { cacheSessions: opts.cacheSessions }),
      });
      stores.set(ctx.generator, store);
    }
    return store;
  };
  return (body, ctx) => {
    const req = parseListLogAggregationsRequest(body);
    const store = storeFor(ctx);
    return aggregateLogs(
      (from, to, visit) => store.forEachInWindow(from, to, visit),
      {
        startMs: req.startMs,
        endMs: Math.min(req.endMs, ctx.nowMs),
        intervalMs: req.intervalMs,
        groupBy: req.groupBy,
        predicate: req.predicate,
        fieldAggregations: req.mode !== "logs_over_time_only",
        logsOverTime: req.mode !== "field_aggregations_only",
        topN,
      },
    );
  };
}

/** Request members by JSON name; proto3 JSON parsers also accept the proto field names. */
const PROTO_NAMES: Readonly<Record<string, string>> = {
  startTimestamp: "start_timestamp",
  endTimestamp: "end_timestamp",
  histogramInterval: "histogram_interval",
  histogramGroupByFields: "histogram_group_by_fields",
};

/** Validates a request body; every problem is `invalid_argument` naming the field. */
export function parseListLogAggregationsRequest(
  raw: Record<string, unknown>,
): ParsedLogAggregationsRequest {
  const body = { ...raw };
  for (const [json, proto] of Object.entries(PROTO_NAMES)) {
    if (!(proto in raw)) continue;
    if (json in raw) throw invalid(`${json} is set twice (also as ${proto})`);
    body[json] = raw[proto];
  }
  const startMs = requiredTimestamp(body, "startTimestamp");
  const endMs = requiredTimestamp(body, "endTimestamp");
  if (!(startMs < endMs)) {
    throw invalid(
      `startTimestamp must be before endTimestamp (got ${new Date(startMs).toISOString()} and ${new Date(endMs).toISOString()})`,
    );
  }
  const intervalText =
    optionalString(body, "histogramInterval") ?? DEFAULT_HISTOGRAM_INTERVAL;
  const intervalMs = parseFixedInterval(intervalText);
  const steps = stepCount(startMs, endMs, intervalMs);
  if (steps > MAX_HISTOGRAM_STEPS) {
    throw invalid(
      `histogramInterval: "${intervalText}" gives ${steps} steps over the window, more than ${MAX_HISTOGRAM_STEPS}; use a larger interval`,
    );
  }
  const groupBy = parseGroupBy(body.histogramGroupByFields);
  const mode = parseMode(optionalString(body, "mode"));
  const query = optionalString(body, "query") ?? "";
  let predicate: EventPredicate;
  try {
    predicate = compileQuery(parseQuery(query));
  } catch (err) {
    if (err instanceof QuerySyntaxError) throw invalid(`query: ${err.message}`);
    throw err;
  }
  return { startMs, endMs, intervalMs, groupBy, mode, predicate };
}

const INTERVAL = /^([1-9][0-9]{0,8})(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A fixed interval such as "30s", "5m", "1h", "1d" in milliseconds. */
function parseFixedInterval(text: string): number {
  const m = INTERVAL.exec(text);
  const unit = m?.[2] as keyof typeof UNIT_MS | undefined;
  if (m === null || unit === undefined) {
    throw invalid(
      `histogramInterval: "${truncateForMessage(text)}" is not a fixed interval <n><unit> with unit s, m, h or d (e.g. "30s", "5m", "1h", "1d")`,
    );
  }
  return Number(m[1]) * UNIT_MS[unit];
}

function parseGroupBy(value: unknown): LogField[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value))
    throw invalid("histogramGroupByFields: expected an array of field names");
  if (value.length > MAX_GROUP_BY_FIELDS) {
    throw invalid(
      `histogramGroupByFields: at most ${MAX_GROUP_BY_FIELDS} fields, got ${value.length}`,
    );
  }
  return value.map((f: unknown, i) => {
    if (typeof f !== "string")
      throw invalid(`histogramGroupByFields[${i}]: expected a string`);
    if (!isLogField(f)) {
      // Clients confuse the dotted field with its aggregation member (resourceTechnologies).
      const squash = (x: string): string =>
        x.replace(/[._]/g, "").toLowerCase();
      const hint =
        LOG_FIELDS.find((k) => squash(k) === squash(f)) ??
        LOG_FIELDS.find((k) => MEMBER_OF_FIELD[k as AggregatedField] === f);
      throw invalid(
        `histogramGroupByFields[${i}]: unknown field "${truncateForMessage(f)}"` +
          (hint === undefined
            ? " (use a dotted log-field path such as resource.technology)"
            : `; did you mean "${hint}"?`),
      );
    }
    return f;
  });
}

function parseMode(mode: string | undefined): AggregationMode | undefined {
  if (mode === undefined) return undefined;
  if (mode === "field_aggregations_only" || mode === "logs_over_time_only")
    return mode;
  throw invalid(
    `mode: "${truncateForMessage(mode)}" is not field_aggregations_only or logs_over_time_only`,
  );
}

function requiredTimestamp(
  body: Record<string, unknown>,
  field: string,
): number {
  const value = body[field];
  if (value === undefined || value === null || value === "")
    throw invalid(`${field} is required`);
  return parseRequestTimestamp(value, field);
}

/** proto3: an empty string is the same as an absent field. */
function optionalString(
  body: Record<string, unknown>,
  field: string,
): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string")
    throw invalid(`${field}: expected a string, got ${typeof value}`);
  return value;
}

function invalid(message: string): SimConnectError {
  return new SimConnectError("invalid_argument", message);
}
