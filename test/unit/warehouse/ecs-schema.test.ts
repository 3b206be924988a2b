// Every field the ECS view writes, against the fields of ECS 8.11.0 as the schema's generated
// flat list defines them (test/fixtures/ecs-8.11.0/): each path a field of ECS, of a type the
// view's kind of value fits, an array exactly where ECS normalizes the field to one, and every
// constant the view writes into a field with allowed values one of them.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  IS_DATASTORE,
  OPENED,
  type FieldKind,
} from "../../../src/warehouse/standards/fields.js";
import { ECS_SESSIONS } from "../../../src/warehouse/standards/ecs.js";

interface EcsField {
  type: string;
  level: string;
  normalize?: string[];
  allowed_values?: { name: string }[];
}

const VERSION = "8.11.0";
const ECS = parse(
  readFileSync(
    new URL(`../../fixtures/ecs-${VERSION}/ecs_flat.yml`, import.meta.url),
    "utf8",
  ),
) as Record<string, EcsField>;
const fields = ECS_SESSIONS.fields;

/** The ECS types a field of each kind may have. */
const COMPATIBLE: Record<FieldKind, readonly string[]> = {
  string: [
    "keyword",
    "constant_keyword",
    "wildcard",
    "text",
    "match_only_text",
    "ip",
  ],
  integer: ["integer", "long"],
  long: ["long"],
  timestamp: [],
  boolean: ["boolean"],
  date: ["date"],
  object: ["object", "flattened", "nested"],
};

/**
 * The string literals of a field's SQL but those of the conditions it tests (the technologies of
 * a datastore, the statuses of an opened session): the constants it can write.
 */
const literals = (sql: string) =>
  [
    ...sql
      .replaceAll(IS_DATASTORE, "")
      .replaceAll(OPENED, "")
      .matchAll(/'([^'\\]*)'/g),
  ].map((m) => m[1] ?? "");

describe(`the ECS view's fields against ECS ${VERSION}`, () => {
  it("writes the version of the schema it is checked against", () => {
    const version = fields.find((f) => f.path === "ecs.version");
    expect(version?.sql).toBe(`'${VERSION}'`);
    expect(ECS_SESSIONS.standard).toBe(`ECS ${VERSION}`);
  });

  it("writes every path as a field of ECS, of a compatible type, an array where ECS has one", () => {
    const problems = fields.flatMap((f) => {
      const ecs = ECS[f.path];
      if (ecs === undefined) return [`${f.path}: no such field`];
      const found: string[] = [];
      if (!COMPATIBLE[f.kind].includes(ecs.type))
        found.push(`${f.path}: ${f.kind} written, ECS has ${ecs.type}`);
      const array = ecs.normalize?.includes("array") ?? false;
      if ((f.array ?? false) !== array)
        found.push(
          `${f.path}: array ${f.array ?? false} written, ECS has ${array}`,
        );
      // ECS `ip` takes nothing but an address: the view writes one or NULL.
      if (ecs.type === "ip" && !/isIPv4String\(.*isIPv6String\(/.test(f.sql))
        found.push(
          `${f.path}: an ip field written without checking the value is an address`,
        );
      return found;
    });
    expect(problems).toEqual([]);
  });

  it("writes into fields with allowed values only those values", () => {
    const problems: string[] = [];
    for (const f of fields) {
      const allowed = ECS[f.path]?.allowed_values?.map((v) => v.name);
      if (allowed === undefined) continue;
      const written = literals(f.sql);
      expect(written.length, `${f.path} writes constants`).toBeGreaterThan(0);
      for (const value of written)
        if (!allowed.includes(value)) problems.push(`${f.path}: ${value}`);
    }
    expect(problems).toEqual([]);
  });

  it("reads the fixture as the schema lists fields: every listed field has a type and a level", () => {
    for (const [name, f] of Object.entries(ECS)) {
      expect(f.type, name).toMatch(/^[a-z_]+$/);
      expect(["core", "extended", "custom"], name).toContain(f.level);
    }
  });
});
