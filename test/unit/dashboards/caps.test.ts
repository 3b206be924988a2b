// Every table panel and every query variable asks for a bounded result: its outermost query ends
// in `LIMIT <the cap of its kind>`, and a table says in its description that it shows the first
// rows only. Unbounded results are what the read access refuses (docs/dashboards.md#caps). Every
// panel whose answer is partial or approximate (a LIMIT, a SAMPLE, a topK) says so in its title
// or description, so a reader knows what the numbers leave out.
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

/**
 * What a panel's title and description must say for each way its answer leaves rows out or
 * estimates: the number an outermost LIMIT keeps ("the 15 most called", "the first 1000 rows"),
 * "sampled" for a SAMPLE clause, "approximate" for topK; undefined when nothing is missing.
 */
function approximations(sql: string): RegExp[] {
  const says: RegExp[] = [];
  const limit = outerLimit(sql);
  if (typeof limit === "number")
    says.push(new RegExp(`\\b(first|top|the) ${limit}\\b`, "i"));
  const words = [...tokens(sql)].filter((t) => t.kind === "word");
  if (words.some((t) => t.text.toUpperCase() === "SAMPLE"))
    says.push(/\bsampled\b/i);
  if (words.some((t) => /^topk/i.test(t.text))) says.push(/\bapproximate\b/i);
  return says;
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

  it("names what a LIMIT, a SAMPLE or a topK leaves out", () => {
    expect(approximations("SELECT a FROM t")).toEqual([]);
    expect(approximations("SELECT a FROM t LIMIT 1 BY a")).toEqual([]);
    const [limit] = approximations("SELECT a FROM t ORDER BY a LIMIT 20");
    expect("the 20 largest").toMatch(limit ?? /^$/);
    expect("the largest values").not.toMatch(limit ?? /^$/);
    const [sample] = approximations("SELECT a FROM t SAMPLE 0.1");
    expect("sampled: a tenth of the sessions").toMatch(sample ?? /^$/);
    const [top] = approximations("SELECT topK(5)(a) FROM t");
    expect("approximate counts").toMatch(top ?? /^$/);
  });

  describe.each(dashboards)("$file", ({ dashboard }) => {
    it(`caps every query variable at ${VARIABLE_OPTION_CAP} options`, () => {
      for (const v of queryVariables(dashboard))
        expect(outerLimit(v.query), `variable ${v.name}`).toBe(
          VARIABLE_OPTION_CAP,
        );
    });

    it("says in its title or description where a panel's answer is partial or approximate", () => {
      for (const panel of dashboard.panels)
        for (const t of panel.targets)
          for (const says of approximations(t.rawSql))
            expect(
              `${panel.title}. ${panel.description ?? ""}`,
              `${panel.title} (${t.refId})`,
            ).toMatch(says);
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
