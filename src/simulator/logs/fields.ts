// The log fields the simulator knows, and which `aggregations` member of ListLogAggregations
// counts each of them (docs/control-plane-wire.md, "Log aggregations").

/** A field's value on one event: one string, or the distinct values of a multi-valued field. */
export type FieldValue = string | readonly string[];

/**
 * Dotted log-field path → `aggregations` member. The order is the order of the members in the
 * response. Numbers (rows, data volume, tool-call count) are carried as decimal strings, which is
 * what the top-N keys of the real service hold.
 */
export const MEMBER_OF_FIELD = Object.freeze({
  "session.type": "sessionTypes",
  "session.id": "sessionIds",
  "session.application_name": "sessionApplicationNames",
  "session.client_ip_address": "sessionClientIpAddresses",
  "session.server_ip_address": "sessionServerIpAddresses",
  "query.fingerprint": "queryFingerprints",
  "query.normalized": "queryNormalized",
  "query.received": "queryReceived",
  "query.sent": "querySent",
  "resource.id": "resourceIds",
  "resource.name": "resourceNames",
  "resource.type": "resourceTypes",
  "resource.hostname": "resourceHostnames",
  "resource.technology": "resourceTechnologies",
  "connector.name": "connectorNames",
  "connector.id": "connectorIds",
  "space.name": "spaceNames",
  "space.id": "spaceIds",
  "user.type": "userTypes",
  "user.sub_type": "userSubTypes",
  "user.email": "userEmails",
  "user.username": "userUsernames",
  "user.id": "userIds",
  "end_user.type": "endUserTypes",
  "end_user.name": "endUserNames",
  "end_user.email": "endUserEmails",
  "policy.id": "triggeredPolicyIds",
  "policy.name": "triggeredPolicyNames",
  "policy.status": "triggeredPolicyStatuses",
  "policy.type": "triggeredPolicyTypes",
  "response.data_volume": "responseDataVolumes",
  "response.returned_columns.name": "responseReturnedColumnNames",
  "response.returned_columns.path": "responseReturnedColumnPaths",
  "response.returned_columns.data_label": "responseReturnedColumnDataLabels",
  "response.rows_sent": "responseRowsSent",
  "response.rows_received": "responseRowsReceived",
  "device.system_version": "deviceSystemVersions",
  "device.kernel_version": "deviceKernelVersions",
  "device.computer_name": "deviceComputerNames",
  "device.user_name": "deviceUserNames",
  "device.model_name": "deviceModelNames",
  "device.model_identifier": "deviceModelIdentifiers",
  "device.model_number": "deviceModelNumbers",
  "device.serial_number": "deviceSerialNumbers",
  "user.groups": "userGroups",
  "end_user.groups": "endUserGroups",
  "control_plane.command_name": "controlPlaneCommandNames",
  "control_plane.command_type": "controlPlaneCommandTypes",
  "control_plane.policy_action": "controlPlanePolicyActions",
  "control_plane.service": "controlPlaneServices",
  "control_plane.method": "controlPlaneMethods",
  "control_plane.user_email": "controlPlaneUserEmails",
  "control_plane.user_type": "controlPlaneUserTypes",
  "control_plane.user_id": "controlPlaneUserIds",
  "workflow.id": "workflowIds",
  "workflow.name": "workflowNames",
  "step.name": "stepNames",
  "step.type": "stepTypes",
  "trigger.type": "triggerTypes",
  "trigger.name": "triggerNames",
  "trigger.user_email": "triggerUserEmails",
  "trigger.user_type": "triggerUserTypes",
  "trigger.user_id": "triggerUserIds",
  "llm.tool_call_names": "llmToolCallNames",
  "llm.model": "llmModels",
  "llm.provider": "llmProviders",
  "llm.stop_reason": "llmStopReasons",
  // Not among the members known today, on purpose: the real service adds members over time,
  // so the simulator always answers with one member the exporter has never heard of.
  "llm.tool_call_count": "llmToolCallCounts",
} as const satisfies Record<string, string>);

export type AggregatedField = keyof typeof MEMBER_OF_FIELD;
export type AggregationMember = (typeof MEMBER_OF_FIELD)[AggregatedField];

/** Fields the events carry, that queries and group-bys may use, and that no member counts. */
const UNAGGREGATED_FIELDS = ["resource.environment"] as const;

export type LogField = AggregatedField | (typeof UNAGGREGATED_FIELDS)[number];

const AGGREGATED_FIELDS = Object.keys(MEMBER_OF_FIELD) as AggregatedField[];

/** Every field a query may filter on and `histogramGroupByFields` may name. */
export const LOG_FIELDS: readonly LogField[] = Object.freeze([
  ...AGGREGATED_FIELDS,
  ...UNAGGREGATED_FIELDS,
]);

/** The top-value members of `aggregations`, in response order (without `logsOverTime`). */
export const MEMBERS: readonly AggregationMember[] = Object.freeze(
  AGGREGATED_FIELDS.map((f) => MEMBER_OF_FIELD[f]),
);

/** Members the simulator emits that are not known today (see MEMBER_OF_FIELD). */
export const EXTRA_MEMBERS: readonly AggregationMember[] = Object.freeze([
  "llmToolCallCounts",
]);

/** Field → index into MEMBERS. */
export const MEMBER_INDEX: ReadonlyMap<string, number> = new Map(
  AGGREGATED_FIELDS.map((f, i) => [f, i]),
);

/** Fields that may hold several values on one event; each distinct value counts once. */
export const MULTI_VALUED_FIELDS: readonly LogField[] = Object.freeze([
  "user.groups",
  "end_user.groups",
  "policy.id",
  "policy.name",
  "policy.status",
  "policy.type",
  "response.returned_columns.name",
  "response.returned_columns.path",
  "response.returned_columns.data_label",
  "llm.tool_call_names",
]);

const KNOWN = new Set<string>(LOG_FIELDS);

export function isLogField(path: string): path is LogField {
  return KNOWN.has(path);
}

export type Fields = Partial<Record<LogField, FieldValue | undefined>>;

/**
 * Where an event keeps each field. Fixing the place per field makes a lookup one property
 * access, and lets the generator store per-event numbers in typed arrays instead of objects.
 */
export type FieldHome =
  "ctx" | "detail" | "policy" | "rowsReceived" | "rowsSent" | "dataVolume";

const HOME_BY_PREFIX: readonly (readonly [string, FieldHome])[] = [
  ["session.", "ctx"],
  ["resource.", "ctx"],
  ["connector.", "ctx"],
  ["space.", "ctx"],
  ["user.", "ctx"],
  ["end_user.", "ctx"],
  ["device.", "ctx"],
  ["policy.", "policy"],
  ["response.rows_received", "rowsReceived"],
  ["response.rows_sent", "rowsSent"],
  ["response.data_volume", "dataVolume"],
];

export const HOME_OF_FIELD: Readonly<Record<LogField, FieldHome>> =
  Object.freeze(
    Object.fromEntries(
      LOG_FIELDS.map((f) => [
        f,
        HOME_BY_PREFIX.find(([prefix]) => f.startsWith(prefix))?.[1] ??
          "detail",
      ]),
    ) as Record<LogField, FieldHome>,
  );

/**
 * Fields shared by many events: a resource, a user, a session, a query template, a set of
 * triggered policies. Sharing keeps the cache small and lets the aggregation count a group once
 * per request with a weight instead of once per event.
 *
 * A group may extend parent groups (a session's context extends its resource and its user).
 * `get` looks in the group, then in its parents; `slots` holds only the group's own fields, so
 * the aggregation counts each parent once, with the summed weight of its children. A field
 * must not be both in a group and in one of its parents. (Parents are not merged into a copy:
 * copying the fields of a resource and a user into each of 10 000 sessions a day cost more
 * than the lookups it saved.)
 */
export class FieldGroup {
  readonly own: Readonly<Partial<Record<LogField, FieldValue>>>;
  /** (member index, value) of the group's own fields, for the aggregation's inner loop. */
  readonly slots: readonly (readonly [number, FieldValue])[];
  readonly parents: readonly FieldGroup[];
  /**
   * Scratch space of the aggregation, valid while `stamp` is the current request's: counting
   * on the group itself avoids a map lookup per event. Safe because an aggregation runs
   * synchronously from start to end.
   */
  stamp = 0;
  weight = 0;

  constructor(fields: Fields, parents: readonly FieldGroup[] = []) {
    const own: Partial<Record<LogField, FieldValue>> = {};
    const slots: [number, FieldValue][] = [];
    for (const f of Object.keys(fields) as LogField[]) {
      const v = normalizeValue(fields[f]);
      if (v === undefined) continue;
      own[f] = v;
      const member = MEMBER_INDEX.get(f);
      if (member !== undefined) slots.push([member, v]);
    }
    this.own = own;
    this.slots = slots;
    this.parents = parents;
  }

  get(field: LogField): FieldValue | undefined {
    const v = this.own[field];
    if (v !== undefined) return v;
    for (const p of this.parents) {
      const w = p.get(field);
      if (w !== undefined) return w;
    }
    return undefined;
  }
}

/**
 * The events of one session (or the control-plane events of one hour), as parallel arrays:
 * event i happened at ts[i] and has the fields of ctx, detail[i] and policy[i], plus three
 * numbers. Most of an event is shared with others, so an event costs a few
 * dozen bytes and no object of its own.
 */
export interface EventBatch {
  /** Epoch milliseconds, ascending. */
  readonly ts: Float64Array;
  /** Session, resource, user, end user and device fields, the same for every event. */
  readonly ctx: FieldGroup | undefined;
  /** Query / request / LLM call / control-plane command / workflow step. */
  readonly detail: readonly (FieldGroup | undefined)[];
  /** The policies the event triggered. */
  readonly policy: readonly (FieldGroup | undefined)[];
  /**
   * Rows received, rows sent and data volume of every event, column after column (3 × n
   * values, -1 where absent), or empty when no event has any: one buffer instead of three,
   * since a typed array costs a few hundred bytes before its first element.
   */
  readonly numbers: Float64Array;
}

/** Events from..to-1 of a batch. */
export type BatchVisitor = (b: EventBatch, from: number, to: number) => void;

const SMALL_INTS = Array.from({ length: 1024 }, (_, i) => String(i));

/** Decimal string of n; small ones are shared so that counting hashes one string, not thousands. */
export function intString(n: number): string {
  return SMALL_INTS[n] ?? String(n);
}

/** Column of each number field in EventBatch.numbers. */
export const NUMBER_COLUMN = Object.freeze({
  rowsReceived: 0,
  rowsSent: 1,
  dataVolume: 2,
} as const);

/** A number of event i (column: NUMBER_COLUMN), or -1 when the event lacks it. */
export function numberOf(b: EventBatch, column: number, i: number): number {
  return b.numbers[column * b.ts.length + i] ?? -1;
}

function numberField(
  b: EventBatch,
  column: number,
  i: number,
): string | undefined {
  const n = numberOf(b, column, i);
  return n < 0 ? undefined : intString(n);
}

/** The value of a field on event i of a batch, or undefined when the event lacks it. */
export function fieldValue(
  b: EventBatch,
  i: number,
  field: LogField,
): FieldValue | undefined {
  switch (HOME_OF_FIELD[field]) {
    case "ctx":
      return b.ctx?.get(field);
    case "detail":
      return b.detail[i]?.get(field);
    case "policy":
      return b.policy[i]?.get(field);
    case "rowsReceived":
    case "rowsSent":
    case "dataVolume":
      return numberField(b, NUMBER_COLUMN[HOME_OF_FIELD[field]], i);
  }
}

/** Every field of event i as one flat record: for tests, debugging and docs. */
export function eventRecord(
  b: EventBatch,
  i: number,
): Partial<Record<LogField, FieldValue>> & { ts: number } {
  const out: Partial<Record<LogField, FieldValue>> = {};
  for (const f of LOG_FIELDS) {
    const v = fieldValue(b, i, f);
    if (v !== undefined) out[f] = v;
  }
  return { ts: b.ts[i] ?? NaN, ...out };
}

/** proto3 drops empty values, and a terms aggregation counts a document once per distinct value. */
function normalizeValue(v: FieldValue | undefined): FieldValue | undefined {
  if (v === undefined || v === "") return undefined;
  if (typeof v === "string") return v;
  const distinct = [...new Set(v.filter((x) => x !== ""))];
  if (distinct.length === 0) return undefined;
  return Object.freeze(distinct);
}

/** A batch holding one event with the given fields, each put where it belongs (tests, docs). */
export function batchOfEvent(fields: Fields, ts = 0): EventBatch {
  const byHome: Record<"ctx" | "detail" | "policy", Fields> = {
    ctx: {},
    detail: {},
    policy: {},
  };
  const numbers = { rowsReceived: -1, rowsSent: -1, dataVolume: -1 };
  for (const f of Object.keys(fields) as LogField[]) {
    const v = fields[f];
    const home = HOME_OF_FIELD[f];
    if (home === "ctx" || home === "detail" || home === "policy") {
      byHome[home][f] = v;
    } else if (typeof v === "string") {
      numbers[home] = Number(v);
    }
  }
  const group = (g: Fields): FieldGroup | undefined =>
    Object.keys(g).length === 0 ? undefined : new FieldGroup(g);
  return {
    ts: Float64Array.of(ts),
    ctx: group(byHome.ctx),
    detail: [group(byHome.detail)],
    policy: [group(byHome.policy)],
    numbers: Float64Array.of(
      numbers.rowsReceived,
      numbers.rowsSent,
      numbers.dataVolume,
    ),
  };
}
