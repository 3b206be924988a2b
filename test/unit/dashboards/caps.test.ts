// Every table panel and every query variable asks for a bounded result: its outermost query ends
// in `LIMIT <the cap of its kind>`, and a table says in its description that it shows the first
// rows only. Unbounded results are what the read access refuses (docs/dashboards.md#caps).
import { describe, expect, it } from "vitest";
import { tokens, type Token } from "../../../src/http-front/statement.js";
import {
  loadDashboards,
  queryVariables,
  TABLE_ROW_CAP,
  VARIABLE_OPTION_CAP,
} from "../../helpers/dashboards.js";

/**
 * The row count of the statement's outermost LIMIT (not a `LIMIT n BY`), or a reason there is
 * none: no LIMIT outside brackets, or a UNION / INTERSECT / EXCEPT the LIMIT covers one side of.
 */
function outerLimit(sql: string): number | string {
  const top = [...tokens(sql)].filter((t) => t.depth === 0);
  const word = (t: Token | undefined) =>
    t?.kind === "word" ? t.text.toUpperCase() : undefined;
  let limit: number | string = "no LIMIT outside brackets";
  for (const [i, t] of top.entries()) {
    const w = word(t);
    if (w === "UNION" || w === "INTERSECT" || w === "EXCEPT")
      limit = `a ${w} at the top: put the whole ${w} in a subquery and cap it outside`;
    if (w !== "LIMIT") continue;
    const n = top[i + 1];
    if (n?.kind !== "number") continue;
    if (word(top[i + 2]) === "BY") continue;
    limit = Number(n.text.replaceAll("_", ""));
  }
  return limit;
}

const dashboards = loadDashboards();

describe("caps", () => {
  it("finds the outermost LIMIT, not one in a subquery or a LIMIT … BY", () => {
    expect(outerLimit("SELECT a FROM (SELECT a FROM t LIMIT 5)")).toMatch(
      /no LIMIT/,
    );
    expect(outerLimit("SELECT a FROM t LIMIT 1 BY a")).toMatch(/no LIMIT/);
    expect(outerLimit("SELECT a FROM t LIMIT 1 BY a LIMIT 1000")).toBe(1000);
    expect(
      outerLimit("SELECT a FROM t LIMIT 10 UNION ALL SELECT b FROM u"),
    ).toMatch(/UNION/);
    expect(outerLimit("SELECT a FROM t -- LIMIT 1000\n")).toMatch(/no LIMIT/);
  });

  describe.each(dashboards)("$file", ({ dashboard }) => {
    it(`caps every query variable at ${VARIABLE_OPTION_CAP} options`, () => {
      for (const v of queryVariables(dashboard))
        expect(outerLimit(v.query), `variable ${v.name}`).toBe(
          VARIABLE_OPTION_CAP,
        );
    });

    it(`caps every table panel at ${TABLE_ROW_CAP} rows and says so`, () => {
      for (const panel of dashboard.panels.filter((p) => p.type === "table")) {
        for (const t of panel.targets)
          expect(outerLimit(t.rawSql), `${panel.title} (${t.refId})`).toBe(
            TABLE_ROW_CAP,
          );
        expect(panel.description ?? "", panel.title).toContain(
          `first ${TABLE_ROW_CAP} rows`,
        );
      }
    });
  });
});
