// How the wire faults of faults.ts look on the wire: the bytes of a record broken on purpose
// (invalid UTF-8, a huge record, impossible dates, or one of the classic broken records) and
// the aggregation answers that lie (counts as strings, `{}`, a missing `aggregations`, a
// poisoned window). Which request or record meets which fault is decided in faults.ts.

import {
  FaultInjector,
  type BadDatesVariant,
  type BrokenRecordKind,
  type BrokenWindowVariant,
  type FaultedRecord,
  type FaultedRecordKind,
} from "./faults.js";
import type { WireSession } from "./wire.js";

/** Bytes that are not UTF-8: a lead byte with a bad continuation, then two bytes never valid. */
export const INVALID_UTF8 = Buffer.from([0xc3, 0x28, 0xff, 0xfe]);

/** The unknown member that pads a huge record. */
export const PADDING_MEMBER = "padding";

const MARKER = "@@sim-bad-utf8@@";

/** The record of session `sessionId` broken the way of `kind`, as the bytes to serve. */
export function faultedRecord(
  record: WireSession,
  kind: FaultedRecordKind,
  sessionId: string,
  startMs: number,
  faults: FaultInjector,
): FaultedRecord {
  const out = record as unknown as Record<string, unknown>;
  let variant: string = kind;
  let bytes: Buffer;
  switch (kind) {
    case "badUtf8":
      bytes = invalidUtf8Record(out);
      break;
    case "hugeRecord":
      bytes = paddedRecord(out, faults.hugeRecordBytes);
      break;
    case "badDates":
      variant = withBadDates(out, faults.badDatesVariant(sessionId));
      bytes = Buffer.from(JSON.stringify(out), "utf8");
      break;
    default:
      FaultInjector.corrupt(record, kind satisfies BrokenRecordKind, startMs);
      bytes = Buffer.from(JSON.stringify(out), "utf8");
  }
  return { sessionId, kind, variant, bytes, raw: bytes.toString("utf8") };
}

/** The resource name (or, without one, an extra `label` member) ends in invalid UTF-8. */
function invalidUtf8Record(record: Record<string, unknown>): Buffer {
  const resource = record.resource as Record<string, unknown> | undefined;
  let kept = "";
  if (resource !== undefined && typeof resource.name === "string") {
    kept = resource.name;
    resource.name = MARKER;
  } else {
    record.label = MARKER;
  }
  const text = JSON.stringify(record);
  const at = text.indexOf(MARKER);
  return Buffer.concat([
    Buffer.from(text.slice(0, at), "utf8"),
    Buffer.from(JSON.stringify(kept).slice(1, -1), "utf8"),
    INVALID_UTF8,
    Buffer.from(text.slice(at + MARKER.length), "utf8"),
  ]);
}

/** The record with an unknown `padding` member that brings it to `limit + 1` bytes or more. */
function paddedRecord(record: Record<string, unknown>, limit: number): Buffer {
  const text = JSON.stringify(record);
  const head = Buffer.from(
    `${text.slice(0, -1)},"${PADDING_MEMBER}":"`,
    "utf8",
  );
  const tail = Buffer.from('"}', "utf8");
  const fill = Math.max(0, limit + 1 - head.length - tail.length);
  return Buffer.concat([head, Buffer.alloc(fill, 0x78), tail]);
}

/**
 * Writes the impossible value of `wanted` into the record; returns the variant applied (an
 * open session has no duration to make negative: it gets a start in year 2400 instead).
 */
function withBadDates(
  record: Record<string, unknown>,
  wanted: BadDatesVariant,
): BadDatesVariant {
  const start = String(record.startTime);
  const end = typeof record.endTime === "string" ? record.endTime : undefined;
  switch (wanted) {
    case "impossibleDate":
      record.startTime = `${start.slice(0, 4)}-02-30${start.slice(10)}`;
      return wanted;
    case "year1800":
      record.startTime = `1800${start.slice(4)}`;
      return wanted;
    case "year2400":
      if (end !== undefined) record.endTime = `2400${end.slice(4)}`;
      else record.startTime = `2400${start.slice(4)}`;
      return wanted;
    case "negativeDuration":
      if (typeof record.duration === "string") {
        record.duration = `-${record.duration}`;
        return wanted;
      }
      record.startTime = `2400${start.slice(4)}`;
      return "year2400";
  }
}

type Json = Record<string, unknown>;

/** Every `count` member of the aggregation answer written as a JSON string (proto3 int64). */
export function withStringCounts(answer: Json): Json {
  const visit = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(visit);
    if (typeof v !== "object" || v === null) return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v as Json))
      out[k] =
        (k === "count" || k === "numHits") && typeof x === "number"
          ? String(x)
          : visit(x);
    return out;
  };
  return visit(answer) as Json;
}

/** An answer without `aggregations`: the same content under another member name. */
export function withoutAggregations(answer: Json): Json {
  const { aggregations, ...rest } = answer;
  return { ...rest, aggregation: aggregations ?? {} };
}

/** The answer a poisoned window gives every time. */
export function brokenWindowAnswer(
  answer: Json,
  variant: BrokenWindowVariant,
): Json {
  switch (variant) {
    case "missingAggregations":
      return withoutAggregations(answer);
    case "negativeNumHits":
      return { ...answer, numHits: "-5" };
    case "fractionalCount": {
      // The first histogram step counts half an event more (a window without steps gets a
      // fractional numHits instead).
      const aggregations = { ...(answer.aggregations as Json | undefined) };
      const steps = (aggregations.logsOverTime as Json[] | undefined) ?? [];
      const first = steps[0];
      if (first === undefined) return { ...answer, numHits: "2.5" };
      aggregations.logsOverTime = [
        { ...first, count: Number(first.count ?? 0) + 0.5 },
        ...steps.slice(1),
      ];
      return { ...answer, aggregations };
    }
  }
}
