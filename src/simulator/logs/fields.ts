// The log fields the simulator knows, and which `aggregations` member of ListLogAggregations
// counts each of them (spec: "Logs service / ListLogAggregations").

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
  // Not in the spec's list, on purpose: the real service adds members over time (API-FACTS),
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
export const LOG_FIELDS: readonly LogField[] = Object.freeze([...AGGREGATED_FIELDS, ...UNAGGREGATED_FIELDS]);

/** The top-value members of `aggregations`, in response order (without `logsOverTime`). */
export const MEMBERS: readonly AggregationMember[] = Object.freeze(AGGREGATED_FIELDS.map((f) => MEMBER_OF_FIELD[f]));

/** Members the simulator emits that the spec does not list (see MEMBER_OF_FIELD). */
export const EXTRA_MEMBERS: readonly AggregationMember[] = Object.freeze(["llmToolCallCounts"]);

/** Field → index into MEMBERS. */
export const MEMBER_INDEX: ReadonlyMap<string, number> = new Map(AGGREGATED_FIELDS.map((f, i) => [f, i]));

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
 * Fields shared by many events: a resource, a user, a session, a query template, a set of
 * triggered policies. Sharing keeps the cache small and lets the aggregation count a group once
 * per request with a weight instead of once per event.
 *
 * A group may extend parent groups (a session's context extends its resource and its user):
 * `fields` is the union, for lookups; `slots` holds only the group's own fields, so the
 * aggregation counts each parent once, with the summed weight of its children.
 */
export class FieldGroup {
  readonly fields: Readonly<Partial<Record<LogField, FieldValue>>>;
  /** (member index, value) of the group's own fields, for the aggregation's inner loop. */
  readonly slots: readonly (readonly [number, FieldValue])[];
  readonly parents: readonly FieldGroup[];

  constructor(fields: Fields, parents: readonly FieldGroup[] = []) {
    const merged: Partial<Record<LogField, FieldValue>> = {};
    for (const p of parents) Object.assign(merged, p.fields);
    const slots: [number, FieldValue][] = [];
    for (const f of Object.keys(fields) as LogField[]) {
      const v = normalizeValue(fields[f]);
      if (v === undefined) continue;
      merged[f] = v;
      const member = MEMBER_INDEX.get(f);
      if (member !== undefined) slots.push([member, v]);
    }
    this.fields = merged;
    this.slots = slots;
    this.parents = parents;
  }
}

/**
 * One log event. `own` holds the values particular to this event; a field lives in exactly one
 * of `own` and `shared`.
 */
export interface LogEvent {
  /** Epoch milliseconds. */
  readonly ts: number;
  readonly shared: readonly FieldGroup[];
  readonly own: Readonly<Partial<Record<LogField, FieldValue>>>;
}

export function fieldValue(ev: LogEvent, field: LogField): FieldValue | undefined {
  const v = ev.own[field];
  if (v !== undefined) return v;
  for (const g of ev.shared) {
    const w = g.fields[field];
    if (w !== undefined) return w;
  }
  return undefined;
}

/** proto3 drops empty values, and a terms aggregation counts a document once per distinct value. */
export function normalizeValue(v: FieldValue | undefined): FieldValue | undefined {
  if (v === undefined || v === "") return undefined;
  if (typeof v === "string") return v;
  const distinct = [...new Set(v.filter((x) => x !== ""))];
  if (distinct.length === 0) return undefined;
  return Object.freeze(distinct);
}
