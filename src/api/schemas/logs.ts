// ListLogAggregations (docs/control-plane-wire.md, "Log aggregations"): the request type and
// a tolerant response schema. `aggregations` keeps every member, known or not; the key/count
// members are parsed one by one by `topValueMembers`, so one bad member never loses the others.
import { z } from "zod";
import { MAX_GROUP_BY_FIELDS } from "../../config/schema.js";
import { count64, loose, RFC3339 } from "./common.js";

/** The `aggregations` members known today besides `logsOverTime`, in the API's order. */
export const KNOWN_AGGREGATION_MEMBERS = [
  "sessionTypes",
  "sessionIds",
  "sessionApplicationNames",
  "sessionClientIpAddresses",
  "sessionServerIpAddresses",
  "queryFingerprints",
  "queryNormalized",
  "queryReceived",
  "querySent",
  "resourceIds",
  "resourceNames",
  "resourceTypes",
  "resourceHostnames",
  "resourceTechnologies",
  "connectorNames",
  "connectorIds",
  "spaceNames",
  "spaceIds",
  "userTypes",
  "userSubTypes",
  "userEmails",
  "userUsernames",
  "userIds",
  "endUserTypes",
  "endUserNames",
  "endUserEmails",
  "triggeredPolicyIds",
  "triggeredPolicyNames",
  "triggeredPolicyStatuses",
  "triggeredPolicyTypes",
  "responseDataVolumes",
  "responseReturnedColumnNames",
  "responseReturnedColumnPaths",
  "responseReturnedColumnDataLabels",
  "responseRowsSent",
  "responseRowsReceived",
  "deviceSystemVersions",
  "deviceKernelVersions",
  "deviceComputerNames",
  "deviceUserNames",
  "deviceModelNames",
  "deviceModelIdentifiers",
  "deviceModelNumbers",
  "deviceSerialNumbers",
  "userGroups",
  "endUserGroups",
  "controlPlaneCommandNames",
  "controlPlaneCommandTypes",
  "controlPlanePolicyActions",
  "controlPlaneServices",
  "controlPlaneMethods",
  "controlPlaneUserEmails",
  "controlPlaneUserTypes",
  "controlPlaneUserIds",
  "workflowIds",
  "workflowNames",
  "stepNames",
  "stepTypes",
  "triggerTypes",
  "triggerNames",
  "triggerUserEmails",
  "triggerUserTypes",
  "triggerUserIds",
  "llmToolCallNames",
  "llmModels",
  "llmProviders",
  "llmStopReasons",
] as const;

/** The histogram member of `aggregations`; every other member is a key/count list. */
const LOGS_OVER_TIME_MEMBER = "logsOverTime";

// ---------------------------------------------------------------------------------------------
// Request

/** The service's one limit on group-by fields, kept with the configuration that enforces it first. */
const MAX_HISTOGRAM_GROUP_BY_FIELDS = MAX_GROUP_BY_FIELDS;

const LOG_AGGREGATION_MODES = [
  "field_aggregations_only",
  "logs_over_time_only",
] as const;
export type LogAggregationMode = (typeof LOG_AGGREGATION_MODES)[number];

export interface ListLogAggregationsRequest {
  query?: string;
  /** Required, non-empty; Unix seconds by default. */
  startTimestamp: string;
  /** Required, non-empty. */
  endTimestamp: string;
  histogramInterval?: string;
  /** At most MAX_HISTOGRAM_GROUP_BY_FIELDS entries; buckets nest in this order. */
  histogramGroupByFields?: string[];
  mode?: LogAggregationMode;
}

/** Checks a request before it is sent (the service's own validation rules). */
export const listLogAggregationsRequestSchema = z.object({
  query: z.string().optional(),
  startTimestamp: z.string().min(1, "startTimestamp is required"),
  endTimestamp: z.string().min(1, "endTimestamp is required"),
  histogramInterval: z.string().optional(),
  histogramGroupByFields: z
    .array(z.string().min(1))
    .max(
      MAX_HISTOGRAM_GROUP_BY_FIELDS,
      `at most ${MAX_HISTOGRAM_GROUP_BY_FIELDS} histogramGroupByFields`,
    )
    .optional(),
  mode: z.enum(LOG_AGGREGATION_MODES).optional(),
}) satisfies z.ZodType<ListLogAggregationsRequest>;

// ---------------------------------------------------------------------------------------------
// Response

/** A bucket key: a string, or a number/boolean from some encoders, always exposed as a string. */
const bucketKey = z
  .union([z.string(), z.number(), z.boolean()])
  .transform((v) => String(v))
  .default("");

/**
 * One key/count entry of a top-values member. Counts are exact bigints: the wire declares some
 * 32-bit and some 64-bit, and a count is read the same way whatever its JSON type.
 */
const topValueSchema = loose({ key: bucketKey, count: count64 });
export type TopValue = z.infer<typeof topValueSchema>;

/** A key/count list (proto3 omits an empty list; JSON null means empty too). */
const topValuesSchema = z
  .array(topValueSchema)
  .nullable()
  .transform((v) => v ?? []);

/** A histogram bucket; `buckets` nest one level per group-by field. */
export interface LogBucket {
  key: string;
  count: bigint;
  buckets: LogBucket[];
  [member: string]: unknown;
}

const logBucketSchema = z.looseObject({
  key: bucketKey,
  count: count64,
  get buckets(): z.ZodDefault<z.ZodArray<z.ZodType<LogBucket>>> {
    return z.array(logBucketSchema).default([]);
  },
}) satisfies z.ZodType<LogBucket>;

const EPOCH_MS = /^-?\d+$/;

/** `logsOverTime[].datetime`: RFC 3339, or epoch milliseconds as digits (or a number). */
const logsOverTimeDatetimeSchema = z
  .union([z.string(), z.number().int()])
  .transform((v) => String(v))
  .refine((v) => Number.isFinite(logsOverTimeDatetimeMs(v)), {
    message: "expected an RFC 3339 timestamp or epoch milliseconds",
  });

/** Epoch milliseconds of a `datetime`; NaN when it is neither RFC 3339 nor epoch milliseconds. */
export function logsOverTimeDatetimeMs(v: string | number): number {
  if (typeof v === "number") return Number.isSafeInteger(v) ? v : NaN;
  const s = v.trim();
  if (EPOCH_MS.test(s)) {
    const n = Number(s);
    return Number.isSafeInteger(n) ? n : NaN;
  }
  return RFC3339.test(s) ? Date.parse(s) : NaN;
}

const logsOverTimeEntrySchema = loose({
  datetime: logsOverTimeDatetimeSchema,
  count: count64,
  buckets: z.array(logBucketSchema).default([]),
});

/**
 * `aggregations`: `logsOverTime` is parsed; every other member, known or not, is kept as it
 * came and read with `topValueMembers`.
 */
const logAggregationsSchema = loose({
  logsOverTime: z.array(logsOverTimeEntrySchema).optional(),
});

export const listLogAggregationsResponseSchema = loose({
  aggregations: logAggregationsSchema.prefault({}),
  numHits: count64,
});

export interface TopValueMember {
  member: string;
  values: TopValue[];
}

export interface RejectedAggregationMember {
  member: string;
  /** The member's value as it came, for a dead letter. */
  value: unknown;
  /** A readable account of why it does not parse. */
  error: string;
  issues: z.core.$ZodIssue[];
}

export interface TopValueMembersResult {
  /** Every member except `logsOverTime` that parses as a key/count list, in wire order. */
  members: TopValueMember[];
  /** Members that do not parse; reported, not thrown, so the caller can dead-letter them. */
  rejected: RejectedAggregationMember[];
}

/** Splits `aggregations` into its key/count members (known and unknown alike) and the rest. */
export function topValueMembers(
  aggregations: Readonly<Record<string, unknown>>,
): TopValueMembersResult {
  const members: TopValueMember[] = [];
  const rejected: RejectedAggregationMember[] = [];
  for (const [member, value] of Object.entries(aggregations)) {
    if (member === LOGS_OVER_TIME_MEMBER || value === undefined) continue;
    const parsed = topValuesSchema.safeParse(value);
    if (parsed.success) {
      members.push({ member, values: parsed.data });
    } else {
      rejected.push({
        member,
        value,
        error: z.prettifyError(parsed.error),
        issues: parsed.error.issues,
      });
    }
  }
  return { members, rejected };
}
