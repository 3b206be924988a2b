// The statements that only read: the one allow-list of what SQL from outside the code (a rule
// file, a user's query, a reader's request to the HTTP front) may be. The engine's readonly = 1
// refuses writes, DDL and changes of settings, but still runs some statements that are not
// reads: SYSTEM START/STOP MERGES, KILL QUERY, and SELECT … INTO OUTFILE (which the embedded
// engine writes to a file of the host). So a statement is first parsed by the engine, and runs
// only when the engine's own syntax tree is one of these kinds.
import type { ClickHouseClient } from "@clickhouse/client";
import type { Warehouse } from "./client.js";
import { SinkError } from "./errors.js";

/**
 * The kinds of statement a reader may run, by the name the engine's `EXPLAIN AST` gives the
 * statement's root, with the children the root may have.
 */
const READ_STATEMENTS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  // A SELECT (UNION, INTERSECT, EXCEPT, WITH …) with, at most, its FORMAT. Not INTO OUTFILE (a
  // literal child) and not a SETTINGS clause (a Set child).
  ["SelectWithUnionQuery", new Set(["ExpressionList", "Identifier"])],
  ["ShowTables", new Set(["Identifier"])],
  ["ShowCreateTableQuery", new Set(["Identifier"])],
  ["DescribeQuery", new Set(["TableExpression", "Identifier"])],
  ["ExistsTableQuery", new Set(["Identifier"])],
  // EXPLAIN (PLAN, PIPELINE, ESTIMATE, AST …) of a SELECT, with EXPLAIN's own options (a Set
  // child: `indexes = 1`) and its FORMAT; it runs nothing of the SELECT. Not INTO OUTFILE.
  ["Explain", new Set(["SelectWithUnionQuery", "Identifier", "Set"])],
  // The grants of a user (doctor reads the exporter's and Grafana reader's).
  ["ShowGrantsQuery", new Set(["Identifier"])],
]);

/** The kinds a reader may run, for messages and documentation. */
export const READ_STATEMENT_KINDS: readonly string[] = [
  "SELECT (with UNION, INTERSECT, EXCEPT, WITH, FORMAT)",
  "SHOW TABLES, SHOW SETTINGS",
  "SHOW CREATE TABLE",
  "DESCRIBE",
  "EXISTS",
  "EXPLAIN of a SELECT",
  "SHOW GRANTS",
  "EXPLAIN AST (without options)",
];

/**
 * Why the statement whose syntax tree is `ast` (the text of `EXPLAIN AST`) is not a read a
 * reader may run; undefined when it is one.
 */
export function readStatementRefusal(ast: string): string | undefined {
  const lines = ast.split("\n").filter((l) => l.trim() !== "");
  // EXPLAIN AST only parses the statement it is given, and runs nothing (checkReadStatement
  // itself sends one through the reader, which on the embedded engine held by `run` is the HTTP
  // front): one child, the statement, and no options (a Set child).
  if (/^Explain EXPLAIN AST \(children 1\)$/.test(lines[0]?.trim() ?? ""))
    return undefined;
  const root = lines[0]?.trim().split(" ")[0] ?? "";
  const children = READ_STATEMENTS.get(root);
  if (children === undefined)
    return `${withArticle(describeRoot(root))} statement is not a read`;
  for (const line of lines.slice(1)) {
    // Direct children of the root are indented by one space.
    if (!/^ \S/.test(line)) continue;
    const child = line.trim().split(" ")[0] ?? "";
    if (children.has(child)) continue;
    return child === "Literal"
      ? "INTO OUTFILE writes a file"
      : child === "Set"
        ? "a SETTINGS clause changes settings"
        : `a ${root} with a ${child} is not a read`;
  }
  return undefined;
}

/** "an ALTER", "a SYSTEM": the word with its article, as spoken. */
function withArticle(word: string): string {
  return `${/^[AEIOU]/.test(word) ? "an" : "a"} ${word}`;
}

function describeRoot(root: string): string {
  if (root === "") return "empty";
  if (root === "SYSTEM") return "SYSTEM";
  return root
    .replace(/Query$/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toUpperCase();
}

/** The statement as the engine parses it: one statement, else the engine's error. */
async function parsedStatement(
  client: ClickHouseClient,
  sql: string,
  params: Record<string, unknown>,
): Promise<string> {
  const formatted = await client.query({
    query: "SELECT formatQuery({statement:String}) AS q",
    query_params: { statement: sql },
    format: "JSONEachRow",
  });
  const [row] = await formatted.json<{ q: string }>();
  // Sent as it is (exec): a FORMAT the client appended would be parsed as the explained
  // statement's, which a SYSTEM or KILL statement takes for a syntax error. EXPLAIN answers in
  // the default format: TabSeparated on a server, CSV in the embedded engine, whose quotes are
  // taken off here.
  const { stream } = await client.exec({
    query: `EXPLAIN AST ${row?.q ?? ""}`,
    query_params: params,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks)
    .toString("utf8")
    .split("\n")
    .map((l) =>
      l.length > 1 && l.startsWith('"') && l.endsWith('"')
        ? l.slice(1, -1).replaceAll('""', '"')
        : l,
    )
    .join("\n");
}

/**
 * Refuses, before it runs, SQL that is not one statement of a kind a reader may run
 * (NOT_A_READ): several statements, SYSTEM, KILL, INTO OUTFILE, SETTINGS. Writes, DDL and
 * settings are refused again by the engine, on the warehouse's reader.
 */
export async function checkReadStatement(
  w: Warehouse,
  sql: string,
  params: Record<string, unknown> = {},
): Promise<void> {
  let ast: string;
  try {
    ast = await parsedStatement(w.reader, sql, params);
  } catch (err) {
    throw new SinkError(
      "NOT_A_READ",
      `the SQL cannot be read as one statement: ${(err as Error).message}`,
      {
        cause: err,
        hint: "give one SELECT (or SHOW, DESCRIBE, EXISTS), without a trailing statement",
      },
    );
  }
  const refusal = readStatementRefusal(ast);
  if (refusal !== undefined)
    throw new SinkError(
      "NOT_A_READ",
      `the SQL is refused: ${refusal}; only reads run here`,
      { hint: `give one of: ${READ_STATEMENT_KINDS.join("; ")}` },
    );
}
