// The OCSF 1.8.0 schema as its source files define it (test/fixtures/ocsf-1.8.0/, copied from
// the ocsf-schema repository): a class's attributes with those it inherits and includes, an
// object's along its `extends` chain, each attribute's type from the dictionary, and a checker
// of a nested record against them.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const OCSF_DIR = fileURLToPath(
  new URL("../fixtures/ocsf-1.8.0/", import.meta.url),
);

interface AttributeDef {
  requirement?: string;
  type?: string;
  enum?: Record<string, unknown>;
  "@deprecated"?: unknown;
}

interface SchemaFile {
  name?: string;
  uid?: number;
  extends?: string;
  category?: string;
  attributes: Record<string, AttributeDef | string[]> & { $include?: string[] };
  constraints?: { at_least_one?: string[]; just_one?: string[] };
}

export interface Attribute {
  name: string;
  /** The dictionary's type, or the one the class or object gives it. */
  type: string;
  isArray: boolean;
  requirement: string;
  /** The valid values of an enumerated attribute. */
  enumValues?: Set<string>;
}

export interface Shape {
  attributes: Map<string, Attribute>;
  atLeastOne: string[];
}

function read(path: string): SchemaFile {
  return JSON.parse(readFileSync(join(OCSF_DIR, path), "utf8")) as SchemaFile;
}

const dictionary = JSON.parse(
  readFileSync(join(OCSF_DIR, "dictionary.json"), "utf8"),
) as {
  attributes: Record<string, AttributeDef & { is_array?: boolean }>;
  types: { attributes: Record<string, { type?: string }> };
};

/** A type's base type: email_t → string_t, timestamp_t → long_t; an object's name stays. */
export function baseType(type: string): string {
  return dictionary.types.attributes[type]?.type ?? type;
}

export function isObjectType(type: string): boolean {
  return !(type in dictionary.types.attributes);
}

/**
 * The attributes a file defines, its includes (profiles) first; a profile's attributes are
 * optional to an event or object that does not apply the profile, which a record here never does.
 */
function ownAttributes(file: SchemaFile): Record<string, AttributeDef> {
  const own: Record<string, AttributeDef> = {};
  for (const inc of file.attributes.$include ?? [])
    for (const [k, v] of Object.entries(read(inc).attributes))
      own[k] = { ...(v as AttributeDef), requirement: "optional" };
  for (const [k, v] of Object.entries(file.attributes))
    if (k !== "$include") own[k] = { ...own[k], ...(v as AttributeDef) };
  return own;
}

function merge(chain: SchemaFile[]): Shape {
  const defs: Record<string, AttributeDef> = {};
  let atLeastOne: string[] = [];
  for (const file of chain) {
    for (const [k, v] of Object.entries(ownAttributes(file)))
      defs[k] = { ...defs[k], ...v };
    atLeastOne = file.constraints?.at_least_one ?? atLeastOne;
  }
  const attributes = new Map<string, Attribute>();
  for (const [name, def] of Object.entries(defs)) {
    const dict = dictionary.attributes[name];
    if (!dict) throw new Error(`${name} is not in the dictionary`);
    const values = def.enum ?? dict.enum;
    attributes.set(name, {
      name,
      type: def.type ?? dict.type ?? "",
      isArray: dict.is_array === true,
      requirement: def.requirement ?? dict.requirement ?? "optional",
      ...(values ? { enumValues: new Set(Object.keys(values)) } : {}),
    });
  }
  return { attributes, atLeastOne };
}

/** An object's attributes, along its `extends` chain. */
export function objectShape(name: string): Shape {
  const chain: SchemaFile[] = [];
  for (let n: string | undefined = name; n;) {
    const path = `objects/${n}.json`;
    if (!existsSync(join(OCSF_DIR, path)))
      throw new Error(`objects/${n}.json is not among the fixtures`);
    const file = read(path);
    chain.unshift(file);
    n = file.extends;
  }
  return merge(chain);
}

/** A class's attributes: base_event's, its category's parent's, its own. */
export function classShape(
  path: string,
): Shape & { uid: number; categoryUid: number } {
  const own = read(path);
  const parent = read(join(dirname(path), `${own.extends}.json`));
  const base = read("events/base_event.json");
  const categories = JSON.parse(
    readFileSync(join(OCSF_DIR, "categories.json"), "utf8"),
  ) as { attributes: Record<string, { uid: number }> };
  const categoryUid = categories.attributes[parent.category ?? ""]?.uid ?? -1;
  const uid = categoryUid * 1000 + (own.uid ?? 0);
  const shape = merge([base, parent, own]);
  // The values of category_uid, class_uid and type_uid follow from the class, as the schema's
  // compiled form (the OCSF server's) gives them; base_event lists only 0.
  const activities =
    shape.attributes.get("activity_id")?.enumValues ?? new Set();
  const withValues = (name: string, values: string[]) => {
    const attr = shape.attributes.get(name);
    if (attr) attr.enumValues = new Set(values);
  };
  withValues("category_uid", [String(categoryUid)]);
  withValues("class_uid", [String(uid)]);
  withValues(
    "type_uid",
    [...activities].map((a) => String(uid * 100 + Number(a))),
  );
  return { ...shape, uid, categoryUid };
}

/**
 * The problems of a nested record against a shape: members the shape has no attribute for, values
 * of the wrong type, enum values not in the enum, required attributes missing, an at-least-one
 * constraint unmet. `object` (OCSF's free-form type, e.g. `unmapped`) is not looked into.
 */
export function problemsOf(
  record: Record<string, unknown>,
  shape: Shape,
  at = "",
): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(record)) {
    const attr = shape.attributes.get(name);
    const path = `${at}${name}`;
    if (!attr) {
      problems.push(`${path}: no such attribute`);
      continue;
    }
    if (attr.isArray !== Array.isArray(value)) {
      problems.push(`${path}: array ${attr.isArray} expected`);
      continue;
    }
    for (const v of Array.isArray(value) ? (value as unknown[]) : [value])
      problems.push(...valueProblems(v, attr, path));
  }
  for (const attr of shape.attributes.values())
    if (attr.requirement === "required" && !(attr.name in record))
      problems.push(`${at}${attr.name}: required, missing`);
  if (
    shape.atLeastOne.length > 0 &&
    !shape.atLeastOne.some((name) => name in record)
  )
    problems.push(`${at}: none of ${shape.atLeastOne.join(", ")}`);
  return problems;
}

function valueProblems(
  value: unknown,
  attr: Attribute,
  path: string,
): string[] {
  const base = baseType(attr.type);
  if (base === "object")
    return typeof value === "object" ? [] : [`${path}: object expected`];
  if (isObjectType(base)) {
    if (typeof value !== "object" || value === null)
      return [`${path}: object expected`];
    return problemsOf(
      value as Record<string, unknown>,
      objectShape(base),
      `${path}.`,
    );
  }
  const ok =
    base === "string_t"
      ? typeof value === "string"
      : base === "integer_t" || base === "long_t"
        ? Number.isInteger(value)
        : base === "boolean_t"
          ? typeof value === "boolean"
          : base === "float_t"
            ? typeof value === "number"
            : true;
  if (!ok)
    return [`${path}: ${attr.type} expected, got ${JSON.stringify(value)}`];
  if (attr.enumValues && !attr.enumValues.has(String(value)))
    return [`${path}: ${String(value)} is not a value of its enum`];
  return [];
}

/** A nested record (OCSF or ECS, as exported). */
export type NestedRecord = Record<string, unknown>;

/** The value at a dotted path of a nested record; undefined where a level is missing. */
export function at(record: NestedRecord, path: string): unknown {
  let node: unknown = record;
  for (const part of path.split(".")) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as NestedRecord)[part];
  }
  return node;
}
