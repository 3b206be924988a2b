// A standard-schema view of the sessions (OCSF, ECS) as one table of fields: each field's path in
// the standard, the SQL that computes it over `sessions_enriched`, its kind and what it holds.
// The view's CREATE statement (migrations/0025_standard_views.sql), the export's nesting and
// docs/standards.md are all read from these tables; test/unit/warehouse/standard-views.test.ts
// holds the migration to what `standardViewsMigration` writes.

/**
 * What a field holds, as the standards name it:
 * - string, integer (32 bits), long (64 bits; ClickHouse writes it as a JSON string, the export
 *   turns it into a number), boolean;
 * - timestamp: OCSF's milliseconds since the epoch (a long);
 * - date: a DateTime64 column, written by the export as ISO 8601 (ECS `date`);
 * - object: an array of objects, or a JSON object (OCSF `unmapped`), with `items` naming the
 *   members of each object.
 */
export type FieldKind =
  "string" | "integer" | "long" | "timestamp" | "boolean" | "date" | "object";

export interface ItemField {
  readonly name: string;
  readonly kind: FieldKind;
  readonly array?: boolean;
  readonly items?: readonly ItemField[];
}

export interface StandardField {
  /** The path in the standard, dots between the levels: the view's column name. */
  readonly path: string;
  /** SQL over `sessions_enriched` (alias `s`); NULL leaves the field out of the export. */
  readonly sql: string;
  readonly kind: FieldKind;
  /** An array of `kind` (of objects with `items` when kind is "object"). */
  readonly array?: boolean;
  readonly items?: readonly ItemField[];
  /** What the field holds, for docs/standards.md. */
  readonly doc: string;
}

export interface StandardView {
  /** The view's name: the standard, the class or subject, and the schema version. */
  readonly name: string;
  /** The standard and its version, for people ("OCSF 1.8.0"). */
  readonly standard: string;
  /**
   * The export's order: the column holding the session's start (a field of kind `timestamp` or
   * `date`, the column a range bounds), then the one holding its id.
   */
  readonly order: { readonly time: string; readonly id: string };
  readonly fields: readonly StandardField[];
}

/**
 * The technologies by the kind of datastore they are; one definition for both standards (OCSF
 * `database.type_id` and `databucket`, ECS `event.category`).
 */
export const RELATIONAL_TECHNOLOGIES = [
  "athena",
  "bigquery",
  "clickhouse",
  "mariadb",
  "mssqlserver",
  "mysql",
  "postgres",
  "snowflake",
] as const;
export const NOSQL_TECHNOLOGIES = [
  "dynamodb",
  "elastic",
  "mongodb",
  "redis",
] as const;
const BUCKET_TECHNOLOGIES = ["s3"] as const;

/** `('a', 'b')`, for `x IN …`; the names are fixed words above. */
export function sqlList(values: readonly string[]): string {
  return `(${values.map((v) => `'${v}'`).join(", ")})`;
}

/** SQL: the session's resource is a datastore (a database or a bucket). */
export const IS_DATASTORE = `s.resource_technology IN ${sqlList([...RELATIONAL_TECHNOLOGIES, ...NOSQL_TECHNOLOGIES, ...BUCKET_TECHNOLOGIES])}`;

/** SQL: the session's resource is an object-storage bucket. */
export const IS_BUCKET = `s.resource_technology IN ${sqlList(BUCKET_TECHNOLOGIES)}`;

/** SQL: the session's status is one the control plane gives a session that was opened. */
export const OPENED = "s.session_status IN ('active', 'idle', 'completed')";

/** A field of one value (or an array of them, `array`) without members. */
export function field(
  path: string,
  sql: string,
  kind: FieldKind,
  doc: string,
  array = false,
): StandardField {
  return { path, sql, kind, doc, ...(array ? { array } : {}) };
}

/** The column list of a view: each field's SQL under its path, quoted. */
function columns(view: StandardView): string {
  return view.fields.map((f) => `    ${f.sql} AS \`${f.path}\``).join(",\n");
}

/** The CREATE VIEW statement of a standard view, with migration placeholders. */
export function viewStatement(view: StandardView): string {
  return `CREATE VIEW IF NOT EXISTS {{db}}.${view.name} {{on_cluster}} AS
SELECT
${columns(view)}
FROM {{db}}.sessions_enriched AS s`;
}
