// The keys a config file may hold, read from the schema (schema.ts): a key the schema does not
// name is a mistake (a misspelling, a key put in the wrong section) that would otherwise be
// ignored and leave its setting at the default. Each is named with the known key nearest to it,
// or, under a mapping of named sections (retention.tables), with the names it holds.
import { z } from "zod";
import { byNearness, nearest } from "../util/nearest.js";
import { configSchema } from "./schema.js";

/** A zod schema of the configuration, as this walk reads it. */
type Schema = z.ZodType;

/** The schema under the wrappers that leave the keys a value may hold as they are. */
function unwrap(schema: Schema): Schema {
  let s = schema;
  for (;;) {
    if (
      s instanceof z.ZodDefault ||
      s instanceof z.ZodPrefault ||
      s instanceof z.ZodOptional ||
      s instanceof z.ZodNullable
    )
      s = s.def.innerType as Schema;
    else if (s instanceof z.ZodPipe) s = s.def.in as Schema;
    else return s;
  }
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A key the schema does not name: its path, and the paths of the keys it names beside it; for a
 * key under a mapping of named sections (every member itself a mapping, below the top level:
 * `retention.tables`, one per table), that mapping's path and names.
 */
interface UnknownKey {
  path: string;
  siblings: string[];
  names?: { parent: string; names: string[] };
}

/** Whether the mapping at `path` names sections (every member a mapping) rather than settings. */
function namesSections(shape: Record<string, Schema>, path: readonly string[]) {
  const members = Object.values(shape);
  return (
    path.length > 0 &&
    members.length > 0 &&
    members.every((m) => unwrap(m) instanceof z.ZodObject)
  );
}

function unknownKeys(
  schema: Schema,
  value: unknown,
  path: readonly string[],
): UnknownKey[] {
  const s = unwrap(schema);
  const at = (key: string) => [...path, key];
  if (s instanceof z.ZodObject && isMapping(value)) {
    const shape = s.shape as Record<string, Schema>;
    return Object.entries(value).flatMap(([key, v]) => {
      const member = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (member !== undefined) return unknownKeys(member, v, at(key));
      const siblings = Object.keys(shape).map((k) => at(k).join("."));
      const names = namesSections(shape, path)
        ? { parent: path.join("."), names: Object.keys(shape) }
        : undefined;
      return [
        { path: at(key).join("."), siblings, ...(names ? { names } : {}) },
      ];
    });
  }
  if (s instanceof z.ZodArray && Array.isArray(value))
    return value.flatMap((v, i) =>
      unknownKeys(s.element as Schema, v, at(String(i))),
    );
  if (s instanceof z.ZodRecord && isMapping(value))
    return Object.entries(value).flatMap(([key, v]) =>
      unknownKeys(s.def.valueType as Schema, v, at(key)),
    );
  return [];
}

/** The dotted paths of every key of the schema's mappings (not inside lists). */
function knownPaths(schema: Schema, path: readonly string[]): string[] {
  const s = unwrap(schema);
  if (!(s instanceof z.ZodObject)) return [];
  return Object.entries(s.shape as Record<string, Schema>).flatMap(
    ([key, member]) => {
      const p = [...path, key];
      return [p.join("."), ...knownPaths(member, p)];
    },
  );
}

const lastSegment = (path: string) => path.slice(path.lastIndexOf(".") + 1);

/**
 * The known key nearest to an unknown one, by the last segment of their paths: a key beside it
 * before one of another section (a key put in the wrong section is found there too).
 */
function nearestKey(key: UnknownKey): string | undefined {
  const beside = key.siblings.map((p) => ({ name: lastSegment(p), key: p }));
  const elsewhere = knownPaths(configSchema, [])
    .filter((p) => !key.siblings.includes(p))
    .map((p) => ({ name: lastSegment(p), key: p, cost: 1 }));
  return nearest(lastSegment(key.path), [...beside, ...elsewhere]);
}

/**
 * A problem for every key of a config file's `tree` that the configuration does not know,
 * naming the key, the file and the known key nearest to it.
 */
export function unknownFileKeys(tree: unknown, file: string): string[] {
  return unknownKeys(configSchema, tree, []).map((key) => {
    const unknown = `config file ${file}: unknown key ${key.path}`;
    if (key.names !== undefined) {
      const { parent, names } = key.names;
      const named = byNearness(lastSegment(key.path), names).join(", ");
      return `${unknown} (the names under ${parent}, nearest first: ${named})`;
    }
    const near = nearestKey(key);
    return `${unknown}${near === undefined ? "" : ` (did you mean ${near}?)`}`;
  });
}
