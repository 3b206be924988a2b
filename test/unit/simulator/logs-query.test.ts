import { describe, expect, it } from "vitest";
import {
  batchOfEvent,
  type Fields,
} from "../../../src/simulator/logs/fields.js";
import {
  compileQuery,
  parseQuery,
  QuerySyntaxError,
} from "../../../src/simulator/logs/query.js";

const alice: Fields = {
  "user.email": "alice@acme.io",
  "user.type": "human",
  "user.groups": ["data-eng", "oncall"],
  "resource.technology": "postgres",
  "resource.name": "orders-prod-pg",
  "query.normalized": "SELECT * FROM orders WHERE id = ?",
  "policy.name": ["mask-pii-emails", "block-prod-ddl"],
  "response.rows_sent": "42",
};
const etl: Fields = {
  "user.username": "svc-etl",
  "user.type": "machine",
  "resource.technology": "snowflake",
  "resource.name": "ledger-prod-snowflake",
};

function matches(query: string, fields: Fields): boolean {
  return compileQuery(parseQuery(query))(batchOfEvent(fields), 0);
}

function syntaxError(query: string): QuerySyntaxError {
  try {
    parseQuery(query);
  } catch (err) {
    if (err instanceof QuerySyntaxError) return err;
    throw err;
  }
  throw new Error(`expected a syntax error for ${query}`);
}

describe("query parser", () => {
  it("matches everything on an empty query and on *", () => {
    for (const q of ["", "   ", "*", " * "]) {
      expect(parseQuery(q)).toEqual({ kind: "all" });
      expect(matches(q, alice)).toBe(true);
      expect(matches(q, {})).toBe(true);
    }
  });

  it("matches exact values, quoted values and prefixes", () => {
    expect(matches("user.email:alice@acme.io", alice)).toBe(true);
    expect(matches("user.email:alice", alice)).toBe(false);
    expect(matches("user.email:alice*", alice)).toBe(true);
    expect(
      matches('query.normalized:"SELECT * FROM orders WHERE id = ?"', alice),
    ).toBe(true);
    expect(matches('query.normalized:"SELECT *"', alice)).toBe(false);
    expect(matches("query.normalized:SELECT\\ *", alice)).toBe(true);
    expect(matches("query.normalized:SELECT\\ \\*", alice)).toBe(false);
    expect(matches("response.rows_sent:42", alice)).toBe(true);
    expect(matches("resource.technology:Postgres", alice)).toBe(false); // case-sensitive
  });

  it("treats field:* as presence", () => {
    expect(matches("policy.name:*", alice)).toBe(true);
    expect(matches("policy.name:*", etl)).toBe(false);
  });

  it("matches a multi-valued field when any value matches", () => {
    expect(matches("user.groups:oncall", alice)).toBe(true);
    expect(matches("policy.name:block-prod-ddl", alice)).toBe(true);
    expect(matches("policy.name:block*", alice)).toBe(true);
    expect(matches("policy.name:mask-ssn", alice)).toBe(false);
  });

  it("gives NOT precedence over AND, and AND over OR", () => {
    // a OR b AND c  ==  a OR (b AND c)
    const q =
      "user.type:machine OR user.type:human AND resource.technology:mysql";
    expect(parseQuery(q)).toEqual({
      kind: "or",
      children: [
        { kind: "term", field: "user.type", value: "machine", match: "exact" },
        {
          kind: "and",
          children: [
            {
              kind: "term",
              field: "user.type",
              value: "human",
              match: "exact",
            },
            {
              kind: "term",
              field: "resource.technology",
              value: "mysql",
              match: "exact",
            },
          ],
        },
      ],
    });
    expect(matches(q, etl)).toBe(true);
    expect(matches(q, alice)).toBe(false);
    expect(
      matches(
        "(user.type:machine OR user.type:human) AND resource.technology:mysql",
        etl,
      ),
    ).toBe(false);
    expect(
      matches("NOT user.type:machine AND resource.technology:postgres", alice),
    ).toBe(true);
    expect(
      matches("NOT user.type:machine AND resource.technology:postgres", etl),
    ).toBe(false);
  });

  it("reads juxtaposition as AND, and - / NOT as negation", () => {
    expect(matches("user.type:human resource.technology:postgres", alice)).toBe(
      true,
    );
    expect(
      matches("user.type:human resource.technology:snowflake", alice),
    ).toBe(false);
    expect(matches("-user.type:machine", alice)).toBe(true);
    expect(matches("-user.type:machine", etl)).toBe(false);
    expect(
      matches("resource.name:*prod* -resource.technology:snowflake", etl),
    ).toBe(false);
    expect(
      matches("NOT (user.type:machine OR user.groups:oncall)", alice),
    ).toBe(false);
    expect(matches("+user.type:human", alice)).toBe(true);
    expect(matches("NOT NOT user.type:human", alice)).toBe(true);
  });

  it("lets an unknown field match nothing instead of failing", () => {
    expect(matches("no.such_field:x", alice)).toBe(false);
    expect(matches("NOT no.such_field:x", alice)).toBe(true);
    expect(matches("no.such_field:*", alice)).toBe(false);
  });

  it("reports syntax errors with their position", () => {
    const cases: [string, number, RegExp][] = [
      [
        "user.type:human AND (resource.technology:pg",
        44,
        /expected "\)" to close the "\(" at character 21/,
      ],
      ["user.type:human)", 16, /unexpected "\)"/],
      ["alice", 1, /the term "alice" has no field/],
      ["user.type:", 11, /expected a value after "user.type:"/],
      ['user.email:"alice', 12, /unterminated quoted value/],
      ["user.type:human AND", 20, /expected a term, found the end/],
      ["user.type:human OR OR user.type:machine", 20, /found the operator OR/],
      ["()", 2, /empty parentheses/],
      [":x", 1, /expected a field name/],
      ["- user.type:human", 1, /expected a term right after "-"/],
    ];
    for (const [query, column, message] of cases) {
      const err = syntaxError(query);
      expect(err.message, query).toMatch(message);
      expect(err.position + 1, query).toBe(column);
      expect(err.message, query).toContain(`at character ${column}`);
    }
  });
});
