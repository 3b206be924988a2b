// Reading SHOW GRANTS answers: what the exporter's user lacks on the database, and whether
// Grafana's reader is what dashboards/provisioning/clickhouse/grafana-reader.sh makes it (SELECT
// on the database only, without the `raw` column of sessions; a profile that lets it change
// exactly the settings of READER_SETTINGS). Pure: the answer's lines in.
import { READER_SETTINGS } from "../../warehouse/index.js";

/** One privilege of a GRANT or REVOKE line, on one target. */
interface Privilege {
  grant: boolean;
  /** Upper case, `ALL PRIVILEGES` as `ALL`. */
  name: string;
  /** Columns of a column grant (`SELECT(raw)`); empty for the whole target. */
  columns: string[];
  /** `db.table` with `*` for any, backquotes removed. */
  database: string;
  table: string;
}

const LINE = /^(GRANT|REVOKE)\s+(.+?)\s+ON\s+(\S+)\s+(?:TO|FROM)\s/i;

/** The privileges of SHOW GRANTS lines; role grants (`GRANT r TO u`) have no target and are left out. */
function parseGrants(lines: readonly string[]): Privilege[] {
  const out: Privilege[] = [];
  for (const line of lines) {
    const m = LINE.exec(line.trim());
    if (!m) continue;
    const [database = "*", table = "*"] = splitTarget(m[3] ?? "*");
    for (const part of splitOutside(m[2] ?? "", ",")) {
      const pm = /^([^(]+?)\s*(?:\((.*)\))?$/.exec(part.trim());
      if (!pm) continue;
      const name = (pm[1] ?? "")
        .toUpperCase()
        .replace(/^ALL PRIVILEGES$/, "ALL");
      const columns = pm[2]
        ? pm[2].split(",").map((c) => unquote(c.trim()))
        : [];
      out.push({
        grant: (m[1] ?? "").toUpperCase() === "GRANT",
        name,
        columns,
        database,
        table,
      });
    }
  }
  return out;
}

function unquote(name: string): string {
  return name.replace(/^`(.*)`$/, "$1").replace(/\\`/g, "`");
}

/** `db.table`, `db.*`, `*.*` or `*` (every table), backquotes removed. */
function splitTarget(target: string): [string, string] {
  const parts = splitOutside(target, ".", "`");
  if (parts.length === 1) return ["*", unquote(parts[0] ?? "*")];
  return [unquote(parts[0] ?? "*"), unquote(parts[1] ?? "*")];
}

/** `text` split at `sep` outside brackets (and outside `quote`d names). */
function splitOutside(text: string, sep: string, quote = ""): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote && c === quote) quoted = !quoted;
    else if (!quoted && c === "(") depth++;
    else if (!quoted && c === ")") depth--;
    else if (!quoted && depth === 0 && c === sep) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

/** A privilege the exporter needs and the names that include it. */
interface Need {
  need: string;
  by: readonly string[];
}

/**
 * What the exporter runs on its database: reads, inserts, migrations (CREATE TABLE, CREATE VIEW,
 * DROP of the views and tables they replace), and ALTER (TTL, legal holds, deletes of a job).
 */
const EXPORTER_NEEDS: readonly Need[] = [
  { need: "SELECT", by: ["SELECT", "ALL"] },
  { need: "INSERT", by: ["INSERT", "ALL"] },
  { need: "ALTER", by: ["ALTER", "ALTER TABLE", "ALL"] },
  { need: "CREATE TABLE", by: ["CREATE TABLE", "CREATE", "ALL"] },
  { need: "CREATE VIEW", by: ["CREATE VIEW", "CREATE", "ALL"] },
  { need: "DROP TABLE", by: ["DROP TABLE", "DROP", "ALL"] },
  { need: "DROP VIEW", by: ["DROP VIEW", "DROP", "ALL"] },
];

const CREATE_DATABASE: Need = {
  need: "CREATE DATABASE",
  by: ["CREATE DATABASE", "CREATE", "ALL"],
};

const onDatabase = (p: Privilege, database: string) =>
  (p.database === "*" || p.database === database) && p.columns.length === 0;

/** Whether `need` is granted on the whole database and not revoked on any of its tables. */
function holds(
  ps: readonly Privilege[],
  need: Need,
  database: string,
): boolean {
  const granted = ps.some(
    (p) =>
      p.grant &&
      need.by.includes(p.name) &&
      onDatabase(p, database) &&
      p.table === "*",
  );
  // A column's revoke (the reader's SELECT(raw)) takes nothing the exporter needs.
  const revoked = ps.some(
    (p) => !p.grant && need.by.includes(p.name) && onDatabase(p, database),
  );
  return granted && !revoked;
}

/** The privileges the exporter lacks on `database` (CREATE DATABASE too when it does not exist). */
export function missingExporterGrants(
  lines: readonly string[],
  database: string,
  databaseExists: boolean,
): string[] {
  const ps = parseGrants(lines);
  const needs = databaseExists
    ? EXPORTER_NEEDS
    : [...EXPORTER_NEEDS, CREATE_DATABASE];
  return needs.filter((n) => !holds(ps, n, database)).map((n) => n.need);
}

/**
 * How Grafana's reader differs from what grafana-reader.sh makes it: each problem as a sentence;
 * none when it may SELECT on the database, nothing else, and not the sessions' `raw` column.
 */
export function readerGrantProblems(
  lines: readonly string[],
  database: string,
): string[] {
  const ps = parseGrants(lines);
  const problems: string[] = [];
  if (
    !ps.some(
      (p) =>
        p.grant &&
        p.name === "SELECT" &&
        p.database === database &&
        p.table === "*" &&
        p.columns.length === 0,
    )
  )
    problems.push(`no SELECT on ${database}.*`);
  const beyond = ps.filter(
    (p) =>
      p.grant &&
      (p.name !== "SELECT" ||
        (p.database !== database && p.database !== "system")),
  );
  if (beyond.length > 0)
    problems.push(
      `also granted ${[...new Set(beyond.map((p) => `${p.name} ON ${p.database}.${p.table}`))].join(", ")}`,
    );
  const rawRevoked = ps.some(
    (p) =>
      !p.grant &&
      p.name === "SELECT" &&
      p.database === database &&
      p.table === "sessions" &&
      p.columns.includes("raw"),
  );
  if (!rawRevoked)
    problems.push(`SELECT(raw) ON ${database}.sessions is not revoked`);
  return problems;
}

/**
 * How the settings Grafana's reader may change under readonly = 1 (CHANGEABLE_IN_READONLY or
 * WRITABLE in its profile, `statement` as SHOW CREATE SETTINGS PROFILE prints it) differ from
 * the readers' allow-list READER_SETTINGS: each problem as a sentence.
 */
export function readerProfileProblems(statement: string): string[] {
  const at = statement.search(/\sSETTINGS\s/i);
  const entries =
    at < 0
      ? []
      : splitOutside(
          statement.slice(at).replace(/^\s*SETTINGS\s+/i, ""),
          ",",
          "`",
        );
  const changeable = entries
    .filter((e) => /\b(CHANGEABLE_IN_READONLY|WRITABLE)\s*$/i.test(e.trim()))
    .map((e) => unquote(e.trim().split(/[\s=]/)[0] ?? ""));
  const problems: string[] = [];
  const beyond = changeable.filter((n) => !READER_SETTINGS.has(n));
  if (beyond.length > 0)
    problems.push(
      `its profile lets it change ${beyond.join(", ")}, which a reader may not set`,
    );
  const missing = [...READER_SETTINGS.keys()].filter(
    (n) => !changeable.includes(n),
  );
  if (missing.length > 0)
    problems.push(
      `its profile does not let it change ${missing.join(", ")} (CHANGEABLE_IN_READONLY), which readers set`,
    );
  return problems;
}
