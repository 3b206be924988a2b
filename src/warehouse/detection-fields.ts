// The one field map of the detections: the names a Sigma rule uses, OCSF attribute paths of the
// Datastore Activity class (class_uid 6005, OCSF 1.8), each mapped to a SQL expression over the
// columns of `sessions_enriched` (migrations/0010_entity_views.sql). What OCSF has no attribute
// for is under `unmapped.`, as OCSF itself places such values. A public Sigma rule written for
// another log source names its fields in that source's taxonomy: SIGMA_TAXONOMY_FIELDS maps
// those names onto the OCSF ones, as a Sigma backend's field mapping does, so that such a rule
// runs with its detection unchanged. docs/detections.md lists both.

/** How a field's values compare: text, a list of texts, a number, a time. */
type FieldKind = "string" | "array" | "number";

export interface FieldDef {
  readonly sql: string;
  readonly kind: FieldKind;
  readonly description: string;
}

const f = (sql: string, kind: FieldKind, description: string): FieldDef => ({
  sql,
  kind,
  description,
});

/** OCSF name → expression over sessions_enriched. */
const OCSF_FIELDS: Readonly<Record<string, FieldDef>> = {
  // The person behind the session (the actor), as sessions_enriched names them.
  "actor.user.uid": f("person_id", "string", "the person's id"),
  "actor.user.name": f("person_name", "string", "the person's name"),
  "actor.user.email_addr": f("person_email", "string", "the person's email"),
  "actor.user.type": f(
    "if(end_user_type != '', end_user_type, user_type)",
    "string",
    "the account type of the brand member (human, machine, …)",
  ),
  "actor.user.account.type": f(
    "user_account_type",
    "string",
    "the brand user's account type",
  ),
  "actor.user.groups.name": f(
    "arrayConcat(user_groups, end_user_groups)",
    "array",
    "the groups of the brand user and end user",
  ),
  // The account the session used on the data store.
  "user.name": f(
    "if(native_username != '', native_username, user_username)",
    "string",
    "the native account on the data store (or the username the session gave)",
  ),
  "src_endpoint.ip": f("client_ip_address", "string", "the client's address"),
  "dst_endpoint.ip": f("server_ip_address", "string", "the server's address"),
  "proxy_endpoint.uid": f("sidecar_id", "string", "the sidecar's id"),
  "proxy_endpoint.name": f("sidecar_name", "string", "the sidecar's name"),
  "database.uid": f("resource_id", "string", "the resource's id"),
  "database.name": f("resource_name", "string", "the resource's name"),
  "database.type": f(
    "resource_technology",
    "string",
    "the resource's technology (postgres, snowflake, openai, mcp, …)",
  ),
  "session.uid": f("id", "string", "the session's id"),
  status_detail: f(
    "session_status",
    "string",
    "the session's status as the control plane gives it (active, idle, completed, failed, …)",
  ),
  duration: f(
    "duration_ms",
    "number",
    "the session's duration in milliseconds",
  ),
  time: f(
    "toUnixTimestamp64Milli(start_time)",
    "number",
    "the session's start, epoch ms",
  ),
  "unmapped.resource_type": f(
    "resource_type",
    "string",
    "aws, datastore, instance",
  ),
  "unmapped.connector_name": f(
    "connector_name",
    "string",
    "the connector's name",
  ),
  "unmapped.parent_session_id": f(
    "parent_session_id",
    "string",
    "the parent session",
  ),
  "unmapped.person_via": f(
    "person_via",
    "string",
    "how the person was found: brand, link_user, link_group, none",
  ),
  "unmapped.data_labels": f(
    "data_labels",
    "array",
    "the data labels of the resource's columns in the inventory",
  ),
};

/**
 * A field of another Sigma taxonomy: the OCSF field holding the same value in a session, or,
 * where that log source writes a session's value its own way, the expression that writes it so.
 */
type TaxonomyField =
  | {
      readonly ocsf: string;
      /** The log source whose rules use the name, and what it holds there. */
      readonly source: string;
    }
  | (FieldDef & { readonly source: string });

/**
 * Field names of the log sources public Sigma rules are written for → the value a session has
 * for them. Only names whose meaning a session carries: a client or server address of a
 * connection, the account a logon used, and what a Windows security log records of a logon.
 */
const SIGMA_TAXONOMY_FIELDS: Readonly<Record<string, TaxonomyField>> = {
  "id.orig_h": {
    ocsf: "src_endpoint.ip",
    source: "Zeek: the connection's originator (client) address",
  },
  "id.resp_h": {
    ocsf: "dst_endpoint.ip",
    source: "Zeek: the connection's responder (server) address",
  },
  src_ip: {
    ocsf: "src_endpoint.ip",
    source: "Sigma firewall taxonomy: the source address",
  },
  dst_ip: {
    ocsf: "dst_endpoint.ip",
    source: "Sigma firewall taxonomy: the destination address",
  },
  "c-ip": {
    ocsf: "src_endpoint.ip",
    source: "W3C web server and proxy logs: the client address",
  },
  // A session is an account logging on to a data store over the network, and it is only
  // recorded when the logon succeeded: the statuses of the API are active, idle and completed.
  // In a Windows security log that is event 4624 with logon type 3 (network).
  EventID: {
    ...f(
      "4624",
      "number",
      "4624, an account was successfully logged on: every session",
    ),
    source: "Windows security log: the event's id",
  },
  LogonType: {
    ...f("3", "number", "3, network: every session"),
    source: "Windows security log logon events: how the account logged on",
  },
  IpAddress: {
    ...f(
      "if(client_ip_address = '', '-', client_ip_address)",
      "string",
      "the client's address, '-' when the session has none (as Windows writes it)",
    ),
    source: "Windows security log logon events: the client address",
  },
  TargetUserName: {
    ocsf: "user.name",
    source: "Windows security log logon events: the account logged on",
  },
};

/**
 * A field a Sigma rule names, an OCSF name or another taxonomy's: the name the compiled
 * condition keeps (the OCSF name when the value is an OCSF field's) and its definition.
 */
export function sigmaField(
  written: string,
): { name: string; field: FieldDef } | undefined {
  const t = SIGMA_TAXONOMY_FIELDS[written];
  if (t !== undefined && !("ocsf" in t)) return { name: written, field: t };
  const name = t?.ocsf ?? written;
  const field = OCSF_FIELDS[name];
  return field === undefined ? undefined : { name, field };
}
