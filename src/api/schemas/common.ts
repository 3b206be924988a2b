// Building blocks for tolerant proto3-JSON schemas (API-FACTS, "JSON mapping is proto3's"):
// zero values may be omitted, 64-bit integers arrive as strings, unknown members are kept.
import { z } from "zod";

/** A string that proto3 omits when empty. */
export const str = z.string().default("");

/** A string array that proto3 omits when empty. */
export const strArray = z.array(z.string()).default([]);

export const bool = z.boolean().default(false);

/** A 32-bit integer; proto3 omits 0. */
export const int32 = z.number().int().default(0);

/** A 64-bit integer: a JSON string (or a number from lenient encoders); proto3 omits 0. */
export const int64 = z
  .union([
    z.string().regex(/^-?\d+$/, "expected a 64-bit integer string"),
    z.number().int(),
  ])
  .transform((v) => Number(v))
  .default(0);

/** An RFC 3339 timestamp string; fractional digits vary (0, 3, 6 or 9). */
export const timestamp = z
  .string()
  .refine((v) => RFC3339.test(v) && Number.isFinite(Date.parse(v)), {
    message: "expected an RFC 3339 timestamp",
  });

export const RFC3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;

/** Epoch milliseconds of an RFC 3339 string; sub-millisecond digits are truncated. */
export function timestampMs(v: string): number {
  return Date.parse(v);
}

/** A loose object: members the spec does not name are kept, never a reason to reject. */
export const loose = <T extends z.ZodRawShape>(shape: T) =>
  z.looseObject(shape);

export const listMetadataSchema = loose({
  after: str,
  before: str,
  nextCursor: str,
  count: z
    .union([z.number(), z.string()])
    .transform((v) => Number(v))
    .default(0),
});
export type ListMetadata = z.infer<typeof listMetadataSchema>;

/** A protobuf Duration string ("12.5s", "3600s", "-0.5s") as milliseconds. */
export function durationStringMs(v: string): number | undefined {
  const m = /^(-?\d+(?:\.\d{1,9})?)s$/.exec(v.trim());
  return m ? Math.round(Number(m[1]) * 1000) : undefined;
}
