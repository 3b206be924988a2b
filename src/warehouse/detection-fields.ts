// The field map of the detections: the names a Sigma rule uses. An OCSF name (an attribute path
// of the Datastore Activity class, OCSF 1.8) has the value the one OCSF field table gives it
// (standards/ocsf-fields.ts), over the columns of `sessions_enriched`, so it means in a rule what
// it means in the OCSF view and its export. A public Sigma rule written for another log source
// names its fields in that source's taxonomy: SIGMA_TAXONOMY_FIELDS maps those names onto the
// OCSF ones, as a Sigma backend's field mapping does, so that such a rule runs with its detection
// unchanged. docs/detections.md lists both.
import {
  OCSF_FIELDS,
  type ColumnNamer,
  type OcsfValueKind,
} from "./standards/ocsf-fields.js";

/** A field as a rule's condition reads it: its SQL over sessions_enriched and its kind. */
export interface FieldDef {
  readonly sql: string;
  readonly kind: OcsfValueKind;
  readonly description: string;
}

/** A column of sessions_enriched as a detection's condition names it: bare. */
const BARE: ColumnNamer = (name) => name;

/** A field of another taxonomy computed as that log source writes it, over the columns `c` names. */
interface OwnField {
  readonly sql: (c: ColumnNamer) => string;
  readonly kind: OcsfValueKind;
  readonly description: string;
}

const f = (
  sql: (c: ColumnNamer) => string,
  kind: OcsfValueKind,
  description: string,
): OwnField => ({ sql, kind, description });

/**
 * A field of another Sigma taxonomy: the OCSF field holding the same value in a session, or,
 * where that log source writes a session's value its own way, the expression that writes it so.
 */
export type TaxonomyField =
  | {
      readonly ocsf: string;
      /** The log source whose rules use the name, and what it holds there. */
      readonly source: string;
    }
  | (OwnField & { readonly source: string });

/**
 * Field names of the log sources public Sigma rules are written for → the value a session has
 * for them. Only names whose meaning a session carries: a client or server address of a
 * connection, the account a logon used, and what a Windows security log records of a logon.
 */
export const SIGMA_TAXONOMY_FIELDS: Readonly<Record<string, TaxonomyField>> = {
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
      () => "4624",
      "number",
      "4624, an account was successfully logged on: every session",
    ),
    source: "Windows security log: the event's id",
  },
  LogonType: {
    ...f(() => "3", "number", "3, network: every session"),
    source: "Windows security log logon events: how the account logged on",
  },
  IpAddress: {
    ...f(
      (c) =>
        `if(${c("client_ip_address")} = '', '-', ${c("client_ip_address")})`,
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
  if (t !== undefined && !("ocsf" in t))
    return { name: written, field: { ...t, sql: t.sql(BARE) } };
  const name = t?.ocsf ?? written;
  const field = OCSF_FIELDS[name];
  return field === undefined
    ? undefined
    : { name, field: { ...field, sql: field.sql(BARE) } };
}
