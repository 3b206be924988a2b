// The sessions as OCSF 1.8.0 Datastore Activity events (class_uid 6005, category_uid 6): one
// event per session, activity Connect. A later OCSF version gets a view of its own
// (ocsf_datastore_activity_v1_9, …) in a new migration; this one stays as it is.
import {
  field,
  IS_BUCKET,
  NOSQL_TECHNOLOGIES,
  OPENED,
  RELATIONAL_TECHNOLOGIES,
  sqlList,
  type ItemField,
  type StandardField,
  type StandardView,
} from "./fields.js";
import { ocsfField, type ColumnNamer } from "./ocsf-fields.js";

const OCSF_VERSION = "1.8.0";
const CATEGORY_UID = 6;
const CLASS_UID = 6005;
/** Datastore Activity's activity_id for "Connect": establishing a connection to the datastore. */
const ACTIVITY_CONNECT = 3;

/**
 * The inventory's data labels by OCSF data classification category_id (1 Personal,
 * 2 Governmental, 3 Financial, 6 Security); any other label is 99 (Other).
 */
const LABEL_CATEGORIES: Readonly<Record<number, readonly string[]>> = {
  1: ["email", "phone", "name", "address", "date_of_birth"],
  2: ["ssn", "passport", "driver_license", "tax_id"],
  3: ["credit_card", "iban", "bank_account"],
  6: ["ip_address", "password", "api_key", "secret"],
};
const CATEGORY_CAPTIONS: Readonly<Record<number, string>> = {
  1: "Personal",
  2: "Governmental",
  3: "Financial",
  6: "Security",
  99: "Other",
};

/** SQL: the category_id of the label `l`. */
function categoryIdOf(l: string): string {
  const pairs = Object.entries(LABEL_CATEGORIES).flatMap(([id, labels]) =>
    labels.map((label) => [label, id] as const),
  );
  return `transform(${l}, [${pairs.map(([label]) => `'${label}'`).join(", ")}], [${pairs.map(([, id]) => id).join(", ")}], 99)`;
}

/** SQL: the caption of the category_id `id`. */
function captionOf(id: string): string {
  const entries = Object.entries(CATEGORY_CAPTIONS);
  return `transform(${id}, [${entries.map(([k]) => k).join(", ")}], [${entries.map(([, v]) => `'${v}'`).join(", ")}], 'Other')`;
}

/** A column of sessions_enriched as the view names it. */
const S: ColumnNamer = (column) => `s.${column}`;

/** SQL: the value of the OCSF field table's `path` (ocsf-fields.ts), over the view's columns. */
const value = (path: string) => ocsfField(path).sql(S);

/** SQL: that value, NULL (left out of the export) where it is empty. */
const orAbsent = (path: string) => `nullIf(${value(path)}, '')`;

/** SQL: that value as a String (a LowCardinality column's too), NULL where it is empty. */
const textOrAbsent = (path: string) => `nullIf(toString(${value(path)}), '')`;

const CLASSIFICATION_ITEMS: readonly ItemField[] = [
  { name: "category_id", kind: "integer" },
  { name: "category", kind: "string" },
  {
    name: "discovery_details",
    kind: "object",
    array: true,
    items: [{ name: "type", kind: "string" }],
  },
];

/**
 * SQL: one data classification per data label of the session's resource (the labels of its
 * columns in the current inventory, `sessions_enriched.data_labels`), the label as the type of
 * data discovered; "none" is no label.
 */
const CLASSIFICATIONS = `arrayMap(l -> CAST(tuple(toUInt8(${categoryIdOf("l")}), ${captionOf(categoryIdOf("l"))}, [CAST(tuple(l), 'Tuple(type String)')]), 'Tuple(category_id UInt8, category String, discovery_details Array(Tuple(type String)))'), arrayFilter(l -> l NOT IN ('', 'none'), ${value("unmapped.data_labels")}))`;

const DATABASE_TYPE_ID = `toUInt8(multiIf(s.resource_technology IN ${sqlList(RELATIONAL_TECHNOLOGIES)}, 1, s.resource_technology IN ${sqlList(NOSQL_TECHNOLOGIES)}, 6, 99))`;

/** SQL: `value` where the resource is a database (a datastore that is not a bucket), else NULL. */
const inDatabase = (value: string) => `if(NOT (${IS_BUCKET}), ${value}, NULL)`;
/** SQL: `value` where the resource is a bucket, else NULL. */
const inBucket = (value: string) => `if(${IS_BUCKET}, ${value}, NULL)`;

/** A member of `unmapped`: what the session has and OCSF no attribute for. */
const unmapped = (name: string, sql: string, doc: string): StandardField =>
  field(`unmapped.${name}`, sql, "string", doc);

/** The view of OCSF Datastore Activity (class 6005): one Connect event per session. */
export const OCSF_DATASTORE_ACTIVITY: StandardView = {
  name: "ocsf_datastore_activity_v1_8",
  standard: `OCSF ${OCSF_VERSION}`,
  order: { time: "time", id: "metadata.uid" },
  fields: [
    {
      path: "activity_id",
      sql: `toUInt8(${ACTIVITY_CONNECT})`,
      kind: "integer",
      doc: "3 (Connect): a session is a connection to the resource",
    },
    {
      path: "activity_name",
      sql: "'Connect'",
      kind: "string",
      doc: "Connect",
    },
    {
      path: "category_uid",
      sql: `toUInt8(${CATEGORY_UID})`,
      kind: "integer",
      doc: "6 (Application Activity)",
    },
    {
      path: "category_name",
      sql: "'Application Activity'",
      kind: "string",
      doc: "Application Activity",
    },
    {
      path: "class_uid",
      sql: `toUInt16(${CLASS_UID})`,
      kind: "integer",
      doc: "6005 (Datastore Activity)",
    },
    {
      path: "class_name",
      sql: "'Datastore Activity'",
      kind: "string",
      doc: "Datastore Activity",
    },
    {
      path: "type_uid",
      sql: `toInt64(${CLASS_UID} * 100 + ${ACTIVITY_CONNECT})`,
      kind: "long",
      doc: "class_uid × 100 + activity_id: 600503",
    },
    {
      path: "type_name",
      sql: "'Datastore Activity: Connect'",
      kind: "string",
      doc: "Datastore Activity: Connect",
    },
    {
      path: "severity_id",
      sql: "toUInt8(1)",
      kind: "integer",
      doc: "1 (Informational)",
    },
    {
      path: "severity",
      sql: "'Informational'",
      kind: "string",
      doc: "Informational",
    },
    {
      path: "status_id",
      sql: `toUInt8(if(${OPENED}, 1, 0))`,
      kind: "integer",
      doc: "1 (Success) for a session the control plane opened (`active`, `idle`, `completed`), else 0 (Unknown)",
    },
    {
      path: "status",
      sql: `if(${OPENED}, 'Success', 'Unknown')`,
      kind: "string",
      doc: "the caption of status_id",
    },
    {
      path: "status_detail",
      sql: orAbsent("status_detail"),
      kind: "string",
      doc: "the session's status as the control plane gives it (`active`, `idle`, `completed`)",
    },
    {
      path: "time",
      sql: value("time"),
      kind: "timestamp",
      doc: "the session's start, ms since the epoch",
    },
    {
      path: "start_time",
      sql: value("start_time"),
      kind: "timestamp",
      doc: "the session's start",
    },
    {
      path: "end_time",
      sql: value("end_time"),
      kind: "timestamp",
      doc: "the session's end; absent while it is open",
    },
    {
      path: "duration",
      sql: value("duration"),
      kind: "long",
      doc: "the session's duration in ms; absent while it is open",
    },
    {
      path: "metadata.version",
      sql: `'${OCSF_VERSION}'`,
      kind: "string",
      doc: OCSF_VERSION,
    },
    {
      path: "metadata.product.name",
      sql: "'sessionhouse'",
      kind: "string",
      doc: "sessionhouse, which reads the sessions from the control plane",
    },
    {
      path: "metadata.product.vendor_name",
      sql: "'sessionhouse'",
      kind: "string",
      doc: "sessionhouse",
    },
    {
      path: "metadata.log_provider",
      sql: "'ListSessionsV2'",
      kind: "string",
      doc: "the control plane's operation the session was read from",
    },
    {
      path: "metadata.log_name",
      sql: "'sessions'",
      kind: "string",
      doc: "the table the session is stored in",
    },
    {
      path: "metadata.uid",
      sql: value("metadata.uid"),
      kind: "string",
      doc: "the session's id",
    },
    {
      path: "metadata.logged_time",
      sql: value("metadata.logged_time"),
      kind: "timestamp",
      doc: "when sessionhouse read the session's latest state",
    },
    {
      path: "actor.user.uid",
      sql: orAbsent("actor.user.uid"),
      kind: "string",
      doc: "the person behind the session (`sessions_enriched.person_id`): the control plane's user, the end user a machine acted for, or the user or group of the native user's identity link",
    },
    {
      path: "actor.user.name",
      sql: orAbsent("actor.user.name"),
      kind: "string",
      doc: "that person's name",
    },
    {
      path: "actor.user.email_addr",
      sql: orAbsent("actor.user.email_addr"),
      kind: "string",
      doc: "that person's e-mail address",
    },
    {
      path: "actor.user.type_id",
      sql: value("actor.user.type_id"),
      kind: "integer",
      doc: "1 (User) for a human or a machine acting for one, 4 (Service) for a machine, else 0 (Unknown)",
    },
    {
      path: "actor.user.type",
      sql: value("actor.user.type"),
      kind: "string",
      doc: "the caption of type_id",
    },
    {
      path: "actor.user.groups",
      sql: `arrayMap(g -> CAST(tuple(toString(g)), 'Tuple(name String)'), ${value("actor.user.groups.name")})`,
      kind: "object",
      array: true,
      items: [{ name: "name", kind: "string" }],
      doc: "the groups of the control plane's user (of the end user when there is one)",
    },
    {
      path: "actor.user.account.name",
      sql: orAbsent("actor.user.account.name"),
      kind: "string",
      doc: "the native database account the session used",
    },
    {
      path: "actor.user.account.type_id",
      sql: "if(s.native_username != '', toUInt8(99), NULL)",
      kind: "integer",
      doc: "99 (Other): a datastore's own account",
    },
    {
      path: "actor.user.account.type",
      // The value of OCSF_FIELDS' actor.user.account.type, NULL where that is empty, written as
      // migration 0025 created the view.
      sql: "if(s.native_username != '', 'Native database user', NULL)",
      kind: "string",
      doc: "Native database user",
    },
    {
      path: "actor.session.uid",
      sql: value("actor.session.uid"),
      kind: "string",
      doc: "the session's id",
    },
    {
      path: "src_endpoint.ip",
      sql: orAbsent("src_endpoint.ip"),
      kind: "string",
      doc: "the client's IP address",
    },
    {
      path: "dst_endpoint.ip",
      sql: orAbsent("dst_endpoint.ip"),
      kind: "string",
      doc: "the resource's IP address",
    },
    {
      path: "dst_endpoint.name",
      sql: textOrAbsent("dst_endpoint.name"),
      kind: "string",
      doc: "the resource's name",
    },
    {
      path: "dst_endpoint.svc_name",
      sql: textOrAbsent("dst_endpoint.svc_name"),
      kind: "string",
      doc: "the resource's technology",
    },
    {
      path: "database.uid",
      sql: inDatabase(value("database.uid")),
      kind: "string",
      doc: "the resource's id (every resource but a bucket)",
    },
    {
      path: "database.name",
      sql: inDatabase(`toString(${value("database.name")})`),
      kind: "string",
      doc: "the resource's name",
    },
    {
      path: "database.type",
      sql: inDatabase(`toString(${value("database.type")})`),
      kind: "string",
      doc: "the resource's technology",
    },
    {
      path: "database.type_id",
      sql: inDatabase(DATABASE_TYPE_ID),
      kind: "integer",
      doc: `1 (Relational) for ${RELATIONAL_TECHNOLOGIES.join(", ")}; 6 (NoSQL) for ${NOSQL_TECHNOLOGIES.join(", ")}; 99 (Other) for the rest`,
    },
    {
      path: "database.data_classifications",
      sql: `if(NOT (${IS_BUCKET}), ${CLASSIFICATIONS}, [])`,
      kind: "object",
      array: true,
      items: CLASSIFICATION_ITEMS,
      doc: "one per data label of the resource's columns in the current inventory: category_id (1 Personal, 2 Governmental, 3 Financial, 6 Security, 99 Other), category, the label as discovery_details[].type",
    },
    {
      path: "databucket.uid",
      sql: inBucket("s.resource_id"),
      kind: "string",
      doc: "the resource's id (a bucket: s3)",
    },
    {
      path: "databucket.name",
      sql: inBucket("toString(s.resource_name)"),
      kind: "string",
      doc: "the bucket's name",
    },
    {
      path: "databucket.type",
      sql: inBucket("toString(s.resource_technology)"),
      kind: "string",
      doc: "the resource's technology",
    },
    {
      path: "databucket.type_id",
      sql: inBucket("toUInt8(1)"),
      kind: "integer",
      doc: "1 (S3)",
    },
    {
      path: "databucket.data_classifications",
      sql: `if(${IS_BUCKET}, ${CLASSIFICATIONS}, [])`,
      kind: "object",
      array: true,
      items: CLASSIFICATION_ITEMS,
      doc: "as for database",
    },
    {
      path: "raw_data",
      sql: "s.raw",
      kind: "string",
      doc: "the session record exactly as the control plane sent it",
    },
    {
      path: "raw_data_size",
      sql: "toInt64(length(s.raw))",
      kind: "long",
      doc: "its size in bytes",
    },
    {
      path: "raw_data_hash.algorithm_id",
      sql: "toUInt8(3)",
      kind: "integer",
      doc: "3 (SHA-256)",
    },
    {
      path: "raw_data_hash.algorithm",
      sql: "'SHA-256'",
      kind: "string",
      doc: "SHA-256",
    },
    {
      path: "raw_data_hash.value",
      sql: "lower(hex(SHA256(s.raw)))",
      kind: "string",
      doc: "the SHA-256 of raw_data, hex",
    },
    unmapped(
      "person_via",
      `toString(${value("unmapped.person_via")})`,
      "how the person was found: brand, link_user, link_group, none",
    ),
    unmapped(
      "user_username",
      orAbsent("unmapped.user_username"),
      "the session user's username",
    ),
    unmapped(
      "resource_type",
      textOrAbsent("unmapped.resource_type"),
      "the resource's type (aws, datastore, instance)",
    ),
    unmapped(
      "sidecar_id",
      orAbsent("unmapped.sidecar_id"),
      "the sidecar the session went through",
    ),
    unmapped("sidecar_name", textOrAbsent("unmapped.sidecar_name"), "its name"),
    unmapped(
      "connector_id",
      orAbsent("unmapped.connector_id"),
      "the connector",
    ),
    unmapped(
      "connector_name",
      textOrAbsent("unmapped.connector_name"),
      "its name",
    ),
    unmapped(
      "parent_session_id",
      orAbsent("unmapped.parent_session_id"),
      "the session this one was opened from",
    ),
    unmapped(
      "identity_link_id",
      orAbsent("unmapped.identity_link_id"),
      "the identity link that named the person",
    ),
  ],
};
