// Building blocks for tolerant proto3-JSON schemas (docs/control-plane-wire.md, "JSON mapping"):
// zero values may be omitted, 64-bit integers arrive as strings, unknown members are kept.
import { z } from "zod";

/** A string that proto3 omits when empty. */
export const str = z.string().default("");

/** A string array that proto3 omits when empty. */
export const strArray = z.array(z.string()).default([]);

export const RFC3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Whether `v` is an RFC 3339 timestamp (fractional digits vary: 0, 3, 6 or 9). */
export function isTimestamp(v: string): boolean {
  return RFC3339.test(v) && Number.isFinite(Date.parse(v));
}

/** An RFC 3339 timestamp string. */
export const timestamp = z.string().refine(isTimestamp, {
  message: "expected an RFC 3339 timestamp",
});

/** Epoch milliseconds of an RFC 3339 string; sub-millisecond digits are truncated. */
export function timestampMs(v: string): number {
  return Date.parse(v);
}

/** A loose object: members the service adds over time are kept, never a reason to reject. */
export const loose = <T extends z.ZodRawShape>(shape: T) =>
  z.looseObject(shape);

/** Largest value of a 32-bit count (an int32 field). */
const MAX_COUNT32 = 2 ** 31 - 1;
/** Largest value of a 64-bit count (an int64 field). */
export const MAX_COUNT64 = 2n ** 63n - 1n;

const DIGITS = /^\d+$/;

/**
 * A count as a bigint, or the reason it is not one: a JSON number or a decimal-digit string
 * (proto3 writes 64-bit integers as strings; some encoders write numbers), never negative nor
 * fractional, at most `max`. A JSON number beyond 2^53 is refused: it no longer holds the value
 * that was sent (answers that carry such counts are parsed with parseExactJson, which keeps them
 * as strings).
 */
export function countOf(v: unknown, max: bigint): bigint | string {
  let n: bigint;
  if (typeof v === "number") {
    if (!Number.isFinite(v) || !Number.isInteger(v))
      return `expected a whole count, got ${String(v)}`;
    if (!Number.isSafeInteger(v))
      return `the count ${String(v)} is a JSON number beyond 2^53, its exact value is lost`;
    n = BigInt(v);
  } else if (typeof v === "string") {
    const t = v.trim();
    if (/^-\d+$/.test(t)) return `a count cannot be negative, got ${t}`;
    if (!DIGITS.test(t))
      return `expected a count (digits), got "${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`;
    n = BigInt(t);
  } else {
    return `expected a count, got ${v === null ? "null" : typeof v}`;
  }
  if (n < 0n) return `a count cannot be negative, got ${String(v)}`;
  if (n > max)
    return `the count ${String(v)} is beyond the field's range (at most ${max})`;
  return n;
}

const countSchema = (max: bigint) =>
  z.unknown().transform((v, ctx): bigint => {
    const n = countOf(v, max);
    if (typeof n === "bigint") return n;
    ctx.addIssue({ code: "custom", message: n });
    return z.NEVER;
  });

/** A 32-bit count (a number or a digit string), as a number; proto3 omits 0. */
export const count32 = countSchema(BigInt(MAX_COUNT32))
  .transform((n) => Number(n))
  .default(0);

/** A 64-bit count (a digit string or a number), as an exact bigint; proto3 omits 0. */
export const count64 = countSchema(MAX_COUNT64).default(0n);

export const listMetadataSchema = loose({
  after: str,
  before: str,
  nextCursor: str,
  count: count64,
});
export type ListMetadata = z.infer<typeof listMetadataSchema>;

/** A protobuf Duration string ("12.5s", "3600s", "-0.5s") as milliseconds. */
export function durationStringMs(v: string): number | undefined {
  const m = /^(-?\d+(?:\.\d{1,9})?)s$/.exec(v.trim());
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}
