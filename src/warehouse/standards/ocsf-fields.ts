// The one table of OCSF field → the SQL of its value over the columns of `sessions_enriched`
// (migrations/0010_entity_views.sql): OCSF 1.8 attribute paths of the Datastore Activity class
// (class_uid 6005), and under `unmapped.` what OCSF has no attribute for, as OCSF itself places
// such values. The OCSF view and its export (ocsf.ts) and the detections' Sigma field map
// (../detection-fields.ts) read each name's value here, so a name means the same in a rule and
// in the view. test/integration/warehouse/standard-views.test.ts holds every column named here
// to the migrated schema.

/** How a column of sessions_enriched is written: bare in a detection, `s.<column>` in the view. */
export type ColumnNamer = (column: string) => string;

/** How a field's values compare in a rule: text, a list of texts, a number. */
export type OcsfValueKind = "string" | "array" | "number";

export interface OcsfField {
  /**
   * The field's value over the columns `c` names. Never NULL for a text: an absent value is
   * empty (the view leaves an empty one out, ocsf.ts).
   */
  readonly sql: (c: ColumnNamer) => string;
  readonly kind: OcsfValueKind;
  /** What the field holds, for docs/detections.md. */
  readonly description: string;
}

/** A field whose value is one column as stored. */
const column = (
  name: string,
  kind: OcsfValueKind,
  description: string,
): OcsfField => ({ sql: (c) => c(name), kind, description });

/** A field whose value is computed from columns. */
const computed = (
  sql: (c: ColumnNamer) => string,
  kind: OcsfValueKind,
  description: string,
): OcsfField => ({ sql, kind, description });

/** SQL: the person is a human (or a machine acting for one). */
const human = (c: ColumnNamer) =>
  `${c("end_user_id")} != '' OR ${c("user_type")} = 'human'`;

const millis = (name: string) => (c: ColumnNamer) =>
  `toUnixTimestamp64Milli(${c(name)})`;

/** OCSF name → its value over sessions_enriched. */
export const OCSF_FIELDS: Readonly<Record<string, OcsfField>> = {
  // The person behind the session (the actor), as sessions_enriched finds them.
  "actor.user.uid": column("person_id", "string", "the person's id"),
  "actor.user.name": column("person_name", "string", "the person's name"),
  "actor.user.email_addr": column(
    "person_email",
    "string",
    "the person's email",
  ),
  "actor.user.type_id": computed(
    (c) =>
      `toUInt8(multiIf(${human(c)}, 1, ${c("user_type")} = 'machine', 4, 0))`,
    "number",
    "1 (User) for a human or a machine acting for one, 4 (Service) for a machine, else 0",
  ),
  "actor.user.type": computed(
    (c) =>
      `multiIf(${human(c)}, 'User', ${c("user_type")} = 'machine', 'Service', 'Unknown')`,
    "string",
    "the caption of actor.user.type_id: User, Service or Unknown",
  ),
  "actor.user.groups.name": computed(
    (c) =>
      `if(${c("person_via")} = 'brand', if(${c("end_user_id")} != '', ${c("end_user_groups")}, ${c("user_groups")}), [])`,
    "array",
    "the groups of the control plane's user (of the end user when there is one)",
  ),
  "actor.user.account.name": column(
    "native_username",
    "string",
    "the native database account the session used",
  ),
  "actor.user.account.type": computed(
    (c) => `if(${c("native_username")} != '', 'Native database user', '')`,
    "string",
    "Native database user when the session used a native account",
  ),
  "actor.session.uid": column("id", "string", "the session's id"),
  // The account the session used on the data store (OCSF `user`): the native account, else the
  // username the session gave.
  "user.name": computed(
    (c) =>
      `if(${c("native_username")} != '', ${c("native_username")}, ${c("user_username")})`,
    "string",
    "the native account on the data store (or the username the session gave)",
  ),
  "src_endpoint.ip": column(
    "client_ip_address",
    "string",
    "the client's address",
  ),
  "dst_endpoint.ip": column(
    "server_ip_address",
    "string",
    "the server's address",
  ),
  "dst_endpoint.name": column("resource_name", "string", "the resource's name"),
  "dst_endpoint.svc_name": column(
    "resource_technology",
    "string",
    "the resource's technology",
  ),
  "proxy_endpoint.uid": column("sidecar_id", "string", "the sidecar's id"),
  "proxy_endpoint.name": column("sidecar_name", "string", "the sidecar's name"),
  // Every resource's, in a rule; the view leaves database.* out for a bucket (its values are
  // under databucket.* there).
  "database.uid": column("resource_id", "string", "the resource's id"),
  "database.name": column("resource_name", "string", "the resource's name"),
  "database.type": column(
    "resource_technology",
    "string",
    "the resource's technology (postgres, snowflake, openai, mcp, …)",
  ),
  "metadata.uid": column("id", "string", "the session's id"),
  "session.uid": column("id", "string", "the session's id"),
  status_detail: column(
    "session_status",
    "string",
    "the session's status as the control plane gives it (active, idle, completed, failed, …)",
  ),
  duration: column(
    "duration_ms",
    "number",
    "the session's duration in milliseconds",
  ),
  time: computed(
    millis("start_time"),
    "number",
    "the session's start, epoch ms",
  ),
  start_time: computed(
    millis("start_time"),
    "number",
    "the session's start, epoch ms",
  ),
  end_time: computed(
    millis("end_time"),
    "number",
    "the session's end, epoch ms; none while it is open",
  ),
  "metadata.logged_time": computed(
    millis("fetched_at"),
    "number",
    "when sessionhouse read the session's latest state, epoch ms",
  ),
  "unmapped.person_via": column(
    "person_via",
    "string",
    "how the person was found: brand, link_user, link_group, none",
  ),
  "unmapped.user_username": column(
    "user_username",
    "string",
    "the session user's username",
  ),
  "unmapped.resource_type": column(
    "resource_type",
    "string",
    "aws, datastore, instance",
  ),
  "unmapped.sidecar_id": column("sidecar_id", "string", "the sidecar's id"),
  "unmapped.sidecar_name": column(
    "sidecar_name",
    "string",
    "the sidecar's name",
  ),
  "unmapped.connector_id": column(
    "connector_id",
    "string",
    "the connector's id",
  ),
  "unmapped.connector_name": column(
    "connector_name",
    "string",
    "the connector's name",
  ),
  "unmapped.parent_session_id": column(
    "parent_session_id",
    "string",
    "the parent session",
  ),
  "unmapped.identity_link_id": column(
    "link_id",
    "string",
    "the identity link that named the person",
  ),
  "unmapped.data_labels": column(
    "data_labels",
    "array",
    "the data labels of the resource's columns in the inventory",
  ),
};

/** The table's field `path`; a programming error when the table has none. */
export function ocsfField(path: string): OcsfField {
  const f = OCSF_FIELDS[path];
  if (f === undefined) throw new Error(`no OCSF field ${path} in OCSF_FIELDS`);
  return f;
}
