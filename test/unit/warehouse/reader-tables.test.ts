// The tables a reader may read (src/warehouse/reader-tables.ts), decided on the engine's
// `EXPLAIN AST` of a statement, as the engine prints it (rows of TSV, one node a row).
import { describe, expect, it } from "vitest";
import { readerTableRefusal } from "../../../src/warehouse/reader-tables.js";

const where = { databases: ["wh"], current: "wh" };

/** The syntax tree of `SELECT … FROM <from> [WHERE <where>]`, as EXPLAIN AST prints it. */
function select(from: string[], extra: string[] = []): string[] {
  return [
    `SelectWithUnionQuery (children 1)`,
    ` ExpressionList (children 1)`,
    `  SelectQuery (children ${2 + (extra.length > 0 ? 1 : 0)})`,
    `   ExpressionList (children 1)`,
    `    Asterisk`,
    `   TablesInSelectQuery (children 1)`,
    `    TablesInSelectQueryElement (children 1)`,
    `     TableExpression (children 1)`,
    ...from.map((l) => `      ${l}`),
    ...extra.map((l) => `   ${l}`),
  ];
}

/** `… WHERE x IN <right>`. */
const inWhere = (right: string) => [
  "Function in (children 1)",
  " ExpressionList (children 2)",
  "  Identifier x",
  `  ${right}`,
];

describe("readerTableRefusal", () => {
  it.each([
    [
      "the warehouse's tables, qualified or not",
      select(["TableIdentifier wh.sessions"]),
    ],
    [
      "an unqualified name in the warehouse's database",
      select(["TableIdentifier sessions (alias s)"]),
    ],
    [
      "the system tables that list databases, tables, columns",
      select(["TableIdentifier system.columns"]),
    ],
    [
      "numbers()",
      select([
        "Function numbers (alias n) (children 1)",
        " ExpressionList (children 1)",
        "  Literal UInt64_3",
      ]),
    ],
    [
      "IN a set of values",
      select(
        ["TableIdentifier wh.t"],
        inWhere("Literal Tuple_(UInt64_1, UInt64_2)"),
      ),
    ],
    [
      "IN a table of the warehouse",
      select(["TableIdentifier wh.t"], inWhere("Identifier wh.u")),
    ],
    [
      "EXPLAIN AST of anything",
      [
        "Explain EXPLAIN AST (children 1)",
        " SelectWithUnionQuery (children 1)",
        "  TableIdentifier system.processes",
      ],
    ],
  ])("lets a reader read %s", (_, rows) => {
    expect(readerTableRefusal(rows, where)).toBeUndefined();
  });

  it.each([
    [
      "system.processes",
      select(["TableIdentifier system.processes"]),
      "a reader may not read system.processes",
    ],
    [
      "an unqualified name in the system database",
      select(["TableIdentifier processes (alias p)"]),
      "a reader may not read system.processes",
      "system",
    ],
    [
      "merge() over the system database",
      select([
        "Function merge (children 1)",
        " ExpressionList (children 2)",
        "  Literal 'system'",
        "  Literal '^processes$'",
      ]),
      "a reader may not use the table function merge",
    ],
    [
      "a table on the right of IN",
      select(["TableIdentifier wh.t"], inWhere("Identifier system.processes")),
      "a reader may not read system.processes",
    ],
    [
      "a table of a subquery",
      select([
        "Subquery (alias p) (children 1)",
        " SelectWithUnionQuery (children 1)",
        "  ExpressionList (children 1)",
        "   SelectQuery (children 2)",
        "    ExpressionList (children 1)",
        "     Asterisk",
        "    TablesInSelectQuery (children 1)",
        "     TablesInSelectQueryElement (children 1)",
        "      TableExpression (children 1)",
        "       TableIdentifier system.query_cache",
      ]),
      "a reader may not read system.query_cache",
    ],
    [
      "another database",
      select(["TableIdentifier other.t"]),
      "a reader may not read other.t",
    ],
    [
      "a name of three parts",
      select(["TableIdentifier we.ird.t"]),
      "cannot be told apart",
    ],
  ])("refuses %s", (_, rows, message, current = "wh") => {
    expect(readerTableRefusal(rows, { ...where, current })).toContain(message);
  });

  it("reads a name's line feed inside its row: a name cannot make a node of its own", () => {
    // `x\n      TableIdentifier wh.t` as an alias: escaped in its row of TSV.
    const rows = select([
      "TableIdentifier system.processes (alias x\\n      TableIdentifier wh.t)",
    ]);
    expect(readerTableRefusal(rows, where)).toContain("system.processes");
  });
});
