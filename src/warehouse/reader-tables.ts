// The tables a reader may read: the one allow-list behind the HTTP front's readers (Grafana's
// token of the read access of `sessionhouse run`). A reader reads the warehouse's database and
// the few system tables that list databases, tables, columns and functions; every other table of
// the engine is refused, among them those that show other clients' SQL and settings
// (system.processes, query_cache, the *_log tables, …) and those that name the host's paths.
// Decided on the engine's own parse of the statement (`EXPLAIN AST`), which resolves query
// parameters ({t:Identifier}) but runs nothing: the tables named in FROM and JOIN, a table on the
// right of IN, and the table functions of a FROM.

/** The system tables a reader may read, each with why a reader needs it. */
const READER_SYSTEM_TABLES: ReadonlyMap<string, string> = new Map([
  [
    "databases",
    "Grafana's data source lists databases (SHOW DATABASES reads it)",
  ],
  [
    "tables",
    "Grafana's data source lists tables (its schema cache, SHOW TABLES, its variable editor)",
  ],
  [
    "columns",
    "Grafana's data source lists the columns of a table (its query builder and ad hoc filters)",
  ],
  ["functions", "Grafana's SQL editor completes function names from it"],
  ["one", "a SELECT without FROM reads it"],
]);

/** The table functions a reader may use in a FROM: they make rows and read no table or file. */
const READER_TABLE_FUNCTIONS: ReadonlySet<string> = new Set(
  [
    "numbers",
    "numbers_mt",
    "zeros",
    "zeros_mt",
    "generate_series",
    "generateSeries",
    "values",
    // Its SELECT is a subquery of the statement, whose tables are checked as any other's.
    "view",
  ].map((f) => f.toLowerCase()),
);

/** Functions whose right argument, when a bare name, is a table whose rows they read. */
const IN_FUNCTIONS: ReadonlySet<string> = new Set([
  "in",
  "notin",
  "globalin",
  "globalnotin",
  "nullin",
  "notnullin",
  "globalnullin",
  "globalnotnullin",
]);

/** What a reader may read: the warehouse's databases, and the database of an unqualified name. */
export interface ReaderTables {
  databases: readonly string[];
  /** The session's current database, where an unqualified table name (or a WITH name) is looked for. */
  current: string;
}

/** The tables a reader may read, for messages and documentation. */
export function readableTables(databases: readonly string[]): string {
  const system = [...READER_SYSTEM_TABLES.keys()].map((t) => `system.${t}`);
  return [...databases.map((d) => `${d}.*`), ...system].join(", ");
}

interface Node {
  kind: string;
  /** The rest of the line after the kind, its "(children N)" taken off. */
  rest: string;
  depth: number;
  children: Node[];
}

/**
 * The syntax tree of `EXPLAIN AST` answered as TSV: one node a row (a line feed in a name is
 * escaped inside its row, so a name cannot make a row of its own), children indented one space
 * deeper than their parent.
 */
function syntaxTree(rows: readonly string[]): Node[] {
  const roots: Node[] = [];
  const stack: Node[] = [];
  for (const row of rows) {
    if (row.trim() === "") continue;
    const depth = row.length - row.trimStart().length;
    const text = row.trim().replace(/ \(children \d+\)$/, "");
    const space = text.indexOf(" ");
    const node: Node = {
      kind: space < 0 ? text : text.slice(0, space),
      rest: space < 0 ? "" : text.slice(space + 1),
      depth,
      children: [],
    };
    while (stack.length > 0 && (stack.at(-1)?.depth ?? 0) >= depth) stack.pop();
    const parent = stack.at(-1);
    if (parent) parent.children.push(node);
    else roots.push(node);
    stack.push(node);
  }
  return roots;
}

/** A TSV field's text: its escapes (\\, \t, \n, …) undone. */
function unescapeTsv(s: string): string {
  const escapes: Record<string, string> = {
    b: "\b",
    f: "\f",
    n: "\n",
    r: "\r",
    t: "\t",
    "0": "\0",
  };
  return s.replace(/\\(.)/g, (_, c: string) => escapes[c] ?? c);
}

/** The name of a TableIdentifier or Identifier node: its text before an alias. */
function nameOf(node: Node): string {
  const alias = node.rest.indexOf(" (alias ");
  return unescapeTsv(alias < 0 ? node.rest : node.rest.slice(0, alias));
}

/** Why a reader may not read the table `name`; undefined when it may. */
function tableRefusal(name: string, where: ReaderTables): string | undefined {
  const parts = name.split(".");
  if (parts.length > 2 || parts.some((p) => p === ""))
    return `the table name ${name} cannot be told apart from a database and a table`;
  const [database, table] =
    parts.length === 1 ? [where.current, name] : [parts[0], parts[1]];
  if (database !== undefined && where.databases.includes(database))
    return undefined;
  if (database === "system" && READER_SYSTEM_TABLES.has(table ?? ""))
    return undefined;
  return `a reader may not read ${database}.${table}`;
}

function* walk(nodes: readonly Node[]): Generator<Node> {
  for (const n of nodes) {
    yield n;
    yield* walk(n.children);
  }
}

/** Why a node (a table, a table function, a table on the right of IN) is refused to a reader. */
function nodeRefusal(node: Node, where: ReaderTables): string | undefined {
  if (node.kind === "TableIdentifier") return tableRefusal(nameOf(node), where);
  if (node.kind === "TableExpression") {
    for (const child of node.children) {
      if (child.kind !== "Function") continue;
      const fn = child.rest.split(" ")[0] ?? "";
      if (!READER_TABLE_FUNCTIONS.has(fn.toLowerCase()))
        return `a reader may not use the table function ${fn}`;
    }
  }
  if (
    node.kind === "Function" &&
    IN_FUNCTIONS.has((node.rest.split(" ")[0] ?? "").toLowerCase())
  ) {
    // Every argument after the first that is a bare name is a table (or a WITH name).
    const args = node.children[0]?.children ?? [];
    for (const arg of args.slice(1))
      if (arg.kind === "Identifier") {
        const refusal = tableRefusal(nameOf(arg), where);
        if (refusal !== undefined) return refusal;
      }
  }
  return undefined;
}

/**
 * Why a reader may not run the statement whose syntax tree is `astRows` (the rows of `EXPLAIN
 * AST` answered as TSV); undefined when every table it reads is one a reader may read. EXPLAIN AST
 * itself reads nothing; SHOW CREATE, EXISTS and SHOW TABLES name tables without reading them.
 */
export function readerTableRefusal(
  astRows: readonly string[],
  where: ReaderTables,
): string | undefined {
  const roots = syntaxTree(astRows);
  if (roots[0]?.kind === "Explain") return undefined;
  for (const node of walk(roots)) {
    const refusal = nodeRefusal(node, where);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}
