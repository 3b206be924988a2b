// How the HTTP front reads an INSERT … SELECT that takes its data through input(…): where the
// call is, where the FORMAT clause ends the statement and the data begins, and what is not a
// call or a clause (strings, comments, quoted names).
import { describe, expect, it } from "vitest";
import { readStatement } from "../../../src/http-front/statement.js";

const STRUCTURE = "'id Int64, raw String'";

describe("readStatement on an INSERT … SELECT from input()", () => {
  it("splits the statement around its one input() call, and finds the data after FORMAT", () => {
    const sql = `INSERT INTO db.t (id, a) SELECT id, JSONExtract(r, 'a', 'Int64') FROM (SELECT *, raw AS r FROM input(${STRUCTURE})) FORMAT JSONCompactEachRow\n[1, "{}"]\n`;
    const s = readStatement(sql);
    expect(s.verb).toBe("INSERT");
    expect(s.inputCalls).toBe(1);
    expect(s.insert).toMatchObject({
      format: "JSONCompactEachRow",
      dataStart: sql.indexOf("[1,"),
      input: {
        before:
          "INSERT INTO db.t (id, a) SELECT id, JSONExtract(r, 'a', 'Int64') FROM (SELECT *, raw AS r FROM ",
        args: STRUCTURE,
        argCount: 1,
        after: ")",
        text: `input(${STRUCTURE})`,
      },
    });
  });

  it("keeps SETTINGS before the SELECT and before FORMAT, WITH, a parenthesised SELECT and a quoted name", () => {
    const withSettings = readStatement(
      `INSERT INTO t SETTINGS async_insert = 0 WITH 2 AS k SELECT id * k FROM input(${STRUCTURE}) SETTINGS max_threads = 1 FORMAT CSV\n1,x\n`,
    ).insert;
    expect(withSettings?.input?.before).toBe(
      "INSERT INTO t SETTINGS async_insert = 0 WITH 2 AS k SELECT id * k FROM ",
    );
    expect(withSettings?.input?.after).toBe(" SETTINGS max_threads = 1");
    expect(withSettings?.format).toBe("CSV");
    const inParentheses = readStatement(
      `INSERT INTO t (SELECT id FROM \`input\`(${STRUCTURE})) FORMAT "CSV"\n1,x`,
    ).insert;
    expect(inParentheses?.input?.text).toBe(`\`input\`(${STRUCTURE})`);
    expect(inParentheses?.format).toBe("CSV");
    expect(
      readStatement("INSERT INTO t SELECT * FROM input() FORMAT CSV\n1").insert
        ?.input,
    ).toMatchObject({ args: "", argCount: 0 });
    expect(
      readStatement(
        "INSERT INTO t SELECT * FROM input(concat('a ', 'Int8'), 'b', f(1, 2)) FORMAT CSV\n1",
      ).insert?.input?.argCount,
    ).toBe(3);
  });

  it("takes no input(, FORMAT or semicolon in a string, a comment or a quoted column for SQL", () => {
    const sql = [
      "INSERT INTO t SELECT id, `format` FROM input('id Int64, format String') -- input('x') FORMAT TSV",
      "WHERE id != 'input(1); FORMAT TSV' /* input( */ FORMAT CSV",
      "1,input(2) FORMAT TSV",
    ].join("\n");
    const s = readStatement(sql);
    expect(s.inputCalls).toBe(1);
    expect(s.insert?.format).toBe("CSV");
    expect(s.insert?.input?.args).toBe("'id Int64, format String'");
    expect(sql.slice(s.insert?.dataStart)).toBe("1,input(2) FORMAT TSV");
  });

  it("counts every input() call, and reads no data without exactly one and a FORMAT clause", () => {
    const twice = readStatement(
      "INSERT INTO t SELECT a FROM input('a Int8') WHERE a IN (SELECT b FROM input('b Int8')) FORMAT CSV\n1",
    );
    expect(twice.inputCalls).toBe(2);
    expect(twice.insert).toBeUndefined();
    const noFormat = readStatement(
      "INSERT INTO t SELECT * FROM input('a Int8')",
    );
    expect(noFormat.inputCalls).toBe(1);
    expect(noFormat.insert).toBeUndefined();
    // The engine matches the name exactly: INPUT is some other function.
    const upper = readStatement(
      "INSERT INTO t SELECT * FROM INPUT('a Int8') FORMAT CSV\n1",
    );
    expect(upper.inputCalls).toBe(0);
    expect(upper.insert).toBeUndefined();
    expect(readStatement("SELECT * FROM input('a Int8')").inputCalls).toBe(
      undefined,
    );
  });

  it("leaves an INSERT with its data after FORMAT or VALUES as it was", () => {
    const sql = "INSERT INTO t SETTINGS a = 1 FORMAT CSV\n1";
    expect(readStatement(sql).insert).toEqual({
      head: "INSERT INTO t",
      settings: "SETTINGS a = 1",
      format: "CSV",
      dataStart: sql.length - 1,
    });
    expect(readStatement("INSERT INTO t (a) VALUES (1)").insert).toMatchObject({
      format: "Values",
      head: "INSERT INTO t (a)",
    });
  });
});
