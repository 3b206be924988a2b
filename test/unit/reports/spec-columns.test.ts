// Every column a report spec names is a column its query returns: read from the query's SELECT
// list (test/helpers/select-list.ts), for both sources of the person (the control-plane streams
// exported or not), without an engine. At run time typedRow refuses a row that lacks one.
import { describe, expect, it } from "vitest";
import { REPORT_KINDS } from "../../../src/config/index.js";
import { KINDS } from "../../../src/reports/build.js";
import type { KindContext } from "../../../src/reports/kinds/context.js";
import { columns, typedRow } from "../../../src/reports/model.js";
import type { Kind } from "../../../src/reports/spec.js";
import type { SessionSource } from "../../../src/warehouse/index.js";
import { selectListNames } from "../../helpers/select-list.js";

const SOURCES: readonly SessionSource[] = ["enriched", "plain"];

/** "kind table (source): column" for each column a table shows that its query does not return. */
function missingColumns(name: string, kind: Kind): string[] {
  const out: string[] = [];
  for (const t of kind.tables) {
    if (t.query === undefined) continue;
    for (const source of SOURCES) {
      // A table's query is a function of the context's source alone.
      const q = t.query({ source } as KindContext);
      const returned = selectListNames(q.sql);
      if (returned === undefined) {
        out.push(`${name} ${t.id} (${source}): no SELECT list in ${q.id}`);
        continue;
      }
      for (const c of t.columns)
        if (!returned.includes(c))
          out.push(
            `${name} ${t.id} (${source}): ${c}, not returned by ${q.id} (${returned.map((r) => r ?? "<no name>").join(", ")})`,
          );
    }
  }
  return out;
}

describe("report specs against their queries", () => {
  it("every column a spec names is one its query returns", () => {
    const checked = REPORT_KINDS.flatMap((k) =>
      KINDS[k].tables.filter((t) => t.query !== undefined),
    );
    // The tables read by one query are most of them; the rest are built by code.
    expect(checked.length).toBeGreaterThan(20);
    expect(
      REPORT_KINDS.flatMap((k) => missingColumns(k, KINDS[k])),
      "spec columns their queries do not return: alias the query's column (… AS name) or fix the spec",
    ).toEqual([]);
  });

  it("names a spec column its query does not return", () => {
    const kind: Kind = {
      title: "T",
      sections: [{ id: "s", title: "S" }],
      tables: [
        {
          id: "t",
          section: "s",
          columns: ["person", "sessions", "last_access"],
          query: () => ({
            id: "q",
            needs: [],
            sql: "SELECT user_key AS person, count() AS sessions, max(start_time) FROM {{db}}.sessions GROUP BY person",
          }),
        },
      ],
      build: () => Promise.reject(new Error("not built")),
    };
    expect(missingColumns("k", kind)).toEqual([
      "k t (enriched): last_access, not returned by q (person, sessions, <no name>)",
      "k t (plain): last_access, not returned by q (person, sessions, <no name>)",
    ]);
  });
});

describe("the SELECT list of a query", () => {
  it("names aliases, columns alone and qualified columns; nothing of subqueries, WITH or strings", () => {
    expect(
      selectListNames(`WITH recent AS (SELECT id AS inner_id FROM t)
SELECT DISTINCT id, s.user AS "person", toString(x) AS text_x, p.policy_id, 'a, b' AS label,
       CAST(n AS UInt64) AS n, count(), -- a comment, FROM x
       if(a, 'FROM', b) AS odd, \`odd name\`
FROM (SELECT 1 AS a) AS s
WHERE x IN (SELECT y AS z FROM u)
UNION ALL SELECT other FROM v`),
    ).toEqual([
      "id",
      "person",
      "text_x",
      "policy_id",
      "label",
      "n",
      undefined,
      "odd",
      "odd name",
    ]);
    expect(selectListNames("SHOW TABLES")).toBeUndefined();
    expect(selectListNames("SELECT {x:String} AS x")).toEqual(["x"]);
  });
});

describe("a report table's row", () => {
  const place = {
    report: "Access review",
    section: "People and their access",
    table: "access-per-person",
  };

  it("is refused when it lacks a column its table shows, naming the report, section and column", () => {
    const cols = columns("person", "sessions:number");
    expect(() => typedRow({ person: "a@x" }, cols, place)).toThrow(
      expect.objectContaining({
        code: "REPORT_COLUMN_MISSING",
        message:
          'the Access review report, section "People and their access", table access-per-person: its spec names the column sessions, and its query returns no such column (it returns person)',
      }),
    );
  });

  it("keeps a column the query returned as null (0, empty) and types the others", () => {
    const cols = columns("person", "sessions:number", "ok:bool");
    expect(
      typedRow({ person: null, sessions: "3", ok: 1, extra: 9 }, cols, place),
    ).toEqual({ person: "", sessions: 3, ok: true });
  });
});
