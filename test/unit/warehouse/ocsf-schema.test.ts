// Every field the OCSF view writes, against the OCSF 1.8.0 schema's own files (the fixtures):
// each path an attribute of the Datastore Activity class (inherited and included ones too) and
// of the objects along it, of a compatible type, an array where the schema has one, and every
// attribute the class and the objects it fills require is written.
import { describe, expect, it } from "vitest";
import type {
  FieldKind,
  ItemField,
} from "../../../src/warehouse/standards/fields.js";
import { OCSF_DATASTORE_ACTIVITY } from "../../../src/warehouse/standards/ocsf.js";
import {
  baseType,
  classShape,
  isObjectType,
  objectShape,
  problemsOf,
  type Attribute,
  type Shape,
} from "../../helpers/ocsf-schema.js";

const CLASS = classShape("events/application/datastore_activity.json");
const fields = OCSF_DATASTORE_ACTIVITY.fields;

/** The base types a field of each kind may have in the schema. */
const COMPATIBLE: Record<FieldKind, (type: string) => boolean> = {
  string: (t) => baseType(t) === "string_t",
  integer: (t) => baseType(t) === "integer_t",
  long: (t) => baseType(t) === "long_t" && t !== "timestamp_t",
  timestamp: (t) => t === "timestamp_t",
  boolean: (t) => baseType(t) === "boolean_t",
  date: () => false,
  object: (t) => isObjectType(t),
};

/** The attribute at a dotted path from a shape, and the shape it sits in; or the problem. */
function resolve(
  path: string,
  shape: Shape,
): { attr: Attribute } | { problem: string } {
  const parts = path.split(".");
  let current = shape;
  for (const [i, part] of parts.entries()) {
    const attr = current.attributes.get(part);
    if (!attr)
      return {
        problem: `${parts.slice(0, i + 1).join(".")}: no such attribute`,
      };
    if (i === parts.length - 1) return { attr };
    if (attr.type === "object") return { attr }; // free-form (unmapped): anything below
    if (!isObjectType(attr.type) || attr.isArray)
      return { problem: `${part} of ${path}: not an object to go into` };
    current = objectShape(attr.type);
  }
  return { problem: `${path}: empty` };
}

function kindProblems(
  path: string,
  attr: Attribute,
  kind: FieldKind,
  array: boolean,
  items: readonly ItemField[] | undefined,
): string[] {
  if (attr.type === "object") return []; // free-form
  const problems: string[] = [];
  if (!COMPATIBLE[kind](attr.type))
    problems.push(`${path}: ${kind} written, the schema has ${attr.type}`);
  if (attr.isArray !== array)
    problems.push(
      `${path}: array ${array} written, the schema has ${attr.isArray}`,
    );
  if (items) {
    const shape = objectShape(attr.type);
    for (const item of items) {
      const a = shape.attributes.get(item.name);
      if (!a) problems.push(`${path}.${item.name}: no such attribute`);
      else
        problems.push(
          ...kindProblems(
            `${path}.${item.name}`,
            a,
            item.kind,
            item.array ?? false,
            item.items,
          ),
        );
    }
  }
  return problems;
}

describe("the OCSF view's fields against the OCSF 1.8.0 schema", () => {
  it("is Datastore Activity: class 6005 in category 6, activity Connect (3)", () => {
    expect(CLASS.uid).toBe(6005);
    expect(CLASS.categoryUid).toBe(6);
    expect(CLASS.attributes.get("activity_id")?.enumValues?.has("3")).toBe(
      true,
    );
    const sql = (path: string) => fields.find((f) => f.path === path)?.sql;
    expect(sql("class_uid")).toBe(`toUInt16(${CLASS.uid})`);
    expect(sql("category_uid")).toBe(`toUInt8(${CLASS.categoryUid})`);
    expect(sql("activity_id")).toBe("toUInt8(3)");
    expect(sql("type_uid")).toBe(`toInt64(${CLASS.uid} * 100 + 3)`);
    expect(sql("metadata.version")).toBe("'1.8.0'");
  });

  it("writes every path as an attribute of the class and of the objects along it, of a compatible type", () => {
    const problems = fields.flatMap((f) => {
      const found = resolve(f.path, CLASS);
      if ("problem" in found) return [found.problem];
      return kindProblems(
        f.path,
        found.attr,
        f.kind,
        f.array ?? false,
        f.items,
      );
    });
    expect(problems).toEqual([]);
  });

  it("writes every attribute the class, and each object it writes, requires", () => {
    const written = new Set(fields.map((f) => f.path));
    const prefixes = new Set(
      fields.flatMap((f) =>
        f.path
          .split(".")
          .slice(0, -1)
          .map((_, i, parts) => parts.slice(0, i + 1).join(".")),
      ),
    );
    const missing: string[] = [];
    const required = (shape: Shape, at: string) => {
      for (const a of shape.attributes.values())
        if (
          a.requirement === "required" &&
          !written.has(at + a.name) &&
          !prefixes.has(at + a.name)
        )
          missing.push(at + a.name);
    };
    required(CLASS, "");
    for (const prefix of prefixes) {
      const found = resolve(prefix, CLASS);
      if (
        "attr" in found &&
        isObjectType(found.attr.type) &&
        found.attr.type !== "object"
      )
        required(objectShape(found.attr.type), `${prefix}.`);
    }
    expect(missing).toEqual([]);
    // The class needs one of database, databucket, table: every row has one of the first two.
    expect(CLASS.atLeastOne).toEqual(["database", "databucket", "table"]);
    expect(fields.some((f) => f.path === "database.uid")).toBe(true);
    expect(fields.some((f) => f.path === "databucket.uid")).toBe(true);
  });

  it("writes the enumerated attributes of constant value with values of their enum", () => {
    const problems: string[] = [];
    for (const f of fields) {
      const m = /^toU?Int\d+\((\d+)\)$/.exec(f.sql);
      if (!m) continue;
      const found = resolve(f.path, CLASS);
      if (
        "attr" in found &&
        found.attr.enumValues &&
        !found.attr.enumValues.has(m[1] ?? "")
      )
        problems.push(`${f.path}: ${m[1]}`);
    }
    expect(problems).toEqual([]);
  });

  it("has a record checker that finds what is wrong in a record", () => {
    const problems = problemsOf(
      {
        activity_id: 42,
        category_uid: 6,
        class_uid: 6005,
        type_uid: 600503,
        severity_id: 1,
        time: "soon",
        metadata: { product: { name: "x" } },
        actor: { user: { name: "a", colour: "red" } },
        src_endpoint: { ip: "10.0.0.1" },
        database: {
          name: "d",
          type_id: 1,
          data_classifications: { category_id: 1 },
        },
        unmapped: { anything: { goes: 1 } },
      },
      CLASS,
    );
    expect(problems.sort()).toEqual([
      "activity_id: 42 is not a value of its enum",
      "actor.user.colour: no such attribute",
      "database.data_classifications: array true expected",
      "metadata.version: required, missing",
      'time: timestamp_t expected, got "soon"',
    ]);
  });
});
