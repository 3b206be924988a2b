// Sigma → ClickHouse SQL, for the subset docs/detections.md lists: field equality and lists,
// wildcards, the modifiers contains, startswith, endswith, re, cidr, all, exists and cased,
// conditions with and/or/not, parentheses, `1 of`/`all of` a pattern or `them`, and the Sigma v1
// aggregation `| count([field]) [by field] <op> N` with a `timeframe`. Anything else is refused
// with the rule, the construct and its line. Field names are the OCSF names of the warehouse's
// field map (src/warehouse/detection-fields.ts), or names of another log source's taxonomy that
// its SIGMA_TAXONOMY_FIELDS maps onto them or writes as that source does; the result is a
// condition tree that
// src/warehouse/detection-sql.ts writes as SQL.
import {
  sigmaField,
  type Condition,
  type FieldDef,
  type FieldMatch,
  type SigmaQuery,
} from "../warehouse/index.js";
import { DetectionRuleError, lineOf, type YamlSource } from "./rule.js";

/** The product a Sigma rule names in `logsource` to read the sessions of this control plane. */
const SIGMA_PRODUCT = "sessionhouse";
const SIGMA_CATEGORY = "database";

/** Members of a Sigma rule this compiler reads or knowingly leaves aside (metadata). */
const KNOWN_KEYS = new Set([
  "title",
  "id",
  "name",
  "status",
  "description",
  "author",
  "date",
  "modified",
  "references",
  "tags",
  "logsource",
  "detection",
  "falsepositives",
  "level",
  "fields",
  "license",
  "related",
  "taxonomy",
  "scope",
]);
const SUPPORTED_MODIFIERS = new Set([
  "contains",
  "startswith",
  "endswith",
  "re",
  "cidr",
  "all",
  "exists",
  "cased",
]);

class Where {
  constructor(
    readonly src: YamlSource,
    readonly base: readonly (string | number)[],
    readonly ruleId: string,
  ) {}
  fail(path: readonly (string | number)[], what: string, hint?: string): never {
    throw new DetectionRuleError(
      `${this.src.file}:${lineOf(this.src, [...this.base, ...path])}: rule ${this.ruleId}: ${what}`,
      { hint: hint ?? "docs/detections.md lists the Sigma subset supported" },
    );
  }
}

/** Compiles the Sigma rule at `path` of `src` (the whole document when path is empty). */
export function compileSigma(
  src: YamlSource,
  path: readonly (string | number)[],
  ruleId: string,
): SigmaQuery {
  const at: Where = new Where(src, path, ruleId);
  const rule: unknown =
    path.length === 0
      ? src.doc.toJS()
      : (
          src.doc.getIn(path) as { toJSON?: () => unknown } | undefined
        )?.toJSON?.();
  if (!isRecord(rule))
    at.fail(
      [],
      "sigma must be a Sigma rule (a mapping with logsource and detection)",
    );
  for (const key of Object.keys(rule))
    if (!KNOWN_KEYS.has(key))
      at.fail([key], `Sigma member \`${key}\` is not supported`);
  checkLogsource(at, rule.logsource);
  const detection = rule.detection;
  if (!isRecord(detection))
    at.fail(["detection"], "a Sigma rule needs a `detection` mapping");
  const { condition, timeframe, ...selections } = detection;
  if (typeof condition !== "string") {
    if (Array.isArray(condition))
      at.fail(
        ["detection", "condition"],
        "a list of Sigma conditions is not supported: write one condition with `or`",
      );
    at.fail(["detection", "condition"], "detection.condition must be a string");
  }
  const compiled: Record<string, Condition> = {};
  for (const [name, sel] of Object.entries(selections))
    compiled[name] = selectionOf(at, ["detection", name], sel);
  const [logic, aggregation] = splitPipe(condition);
  const where = new ConditionParser(at, logic, compiled).parse();
  if (aggregation === undefined) {
    if (timeframe !== undefined)
      at.fail(
        ["detection", "timeframe"],
        "timeframe applies to an aggregation (`| count() … > N`); this condition has none",
      );
    return { where };
  }
  return { where, count: aggregationOf(at, aggregation, timeframe) };
}

function checkLogsource(at: Where, logsource: unknown): void {
  if (!isRecord(logsource))
    at.fail(["logsource"], "a Sigma rule needs a logsource");
  if (logsource.product !== SIGMA_PRODUCT)
    at.fail(
      ["logsource", "product"],
      `logsource.product must be ${SIGMA_PRODUCT} (the sessions this exporter stores)`,
      `set logsource: {product: ${SIGMA_PRODUCT}, category: ${SIGMA_CATEGORY}}`,
    );
  if (logsource.category !== undefined && logsource.category !== SIGMA_CATEGORY)
    at.fail(
      ["logsource", "category"],
      `logsource.category must be ${SIGMA_CATEGORY} or absent`,
    );
  for (const key of Object.keys(logsource))
    if (!["product", "category", "service", "definition"].includes(key))
      at.fail(["logsource", key], `logsource.${key} is not supported`);
  if (logsource.service !== undefined)
    at.fail(
      ["logsource", "service"],
      "logsource.service is not supported: the sessions have one source",
    );
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A selection: a mapping (every field matches) or a list of mappings (any of them matches). */
function selectionOf(
  at: Where,
  path: (string | number)[],
  sel: unknown,
): Condition {
  if (Array.isArray(sel)) {
    if (sel.length === 0) at.fail(path, "an empty selection list");
    return or(
      sel.map((item, i) => {
        if (!isRecord(item))
          at.fail(
            [...path, i],
            "keyword search (values without a field) is not supported: name the field",
          );
        return mappingOf(at, [...path, i], item);
      }),
    );
  }
  if (!isRecord(sel))
    at.fail(
      path,
      "a selection must be a mapping of fields or a list of mappings",
    );
  return mappingOf(at, path, sel);
}

function mappingOf(
  at: Where,
  path: (string | number)[],
  m: Record<string, unknown>,
): Condition {
  const parts = Object.entries(m).map(([key, value]) =>
    fieldOf(at, [...path, key], key, value),
  );
  if (parts.length === 0) at.fail(path, "an empty selection");
  return and(parts);
}

/** A rule's field as the field map has it: the name the condition keeps and its definition. */
function mappedField(
  at: Where,
  path: (string | number)[],
  written: string,
): { name: string; field: FieldDef } {
  const mapped = sigmaField(written);
  if (mapped === undefined)
    at.fail(
      path,
      `field \`${written}\` is not in the field map`,
      "docs/detections.md lists the field names a Sigma rule can use (OCSF, and those of other taxonomies mapped onto them)",
    );
  return mapped;
}

function fieldOf(
  at: Where,
  path: (string | number)[],
  key: string,
  value: unknown,
): Condition {
  const [written = "", ...mods] = key.split("|");
  const { name, field } = mappedField(at, path, written);
  for (const m of mods)
    if (!SUPPORTED_MODIFIERS.has(m))
      at.fail(path, `Sigma modifier \`${m}\` is not supported`);
  if (mods.includes("exists")) {
    if (typeof value !== "boolean")
      at.fail(path, "`exists` takes true or false");
    return {
      kind: "field",
      field: name,
      match: { op: "exists", present: value },
    };
  }
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0) at.fail(path, "an empty list of values");
  const parts = values.map((v, i): Condition => ({
    kind: "field",
    field: name,
    match: valueMatch(
      at,
      Array.isArray(value) ? [...path, i] : path,
      field,
      mods,
      v,
    ),
  }));
  return mods.includes("all") ? and(parts) : or(parts);
}

/** One value against a field, after its modifiers. */
function valueMatch(
  at: Where,
  path: (string | number)[],
  field: FieldDef,
  mods: readonly string[],
  v: unknown,
): FieldMatch {
  const has = (m: string) => mods.includes(m);
  if (v === null) {
    if (mods.length > 0) at.fail(path, "null with a modifier");
    return { op: "null" };
  }
  if (typeof v === "number" && field.kind === "number" && mods.length === 0)
    return { op: "num", value: v };
  if (field.kind === "number")
    at.fail(path, "a numeric field compares with a number, without modifiers");
  if (typeof v !== "string" && typeof v !== "number" && typeof v !== "boolean")
    at.fail(path, "a value must be a string, a number, a boolean or null");
  const text = String(v);
  if (has("re")) {
    if (mods.some((m) => !["re", "all"].includes(m)))
      at.fail(path, "`re` combines with no modifier but `all`");
    return { op: "re", value: text };
  }
  if (has("cidr")) {
    if (!isCidr(text))
      at.fail(path, `\`${text}\` is not a CIDR range such as 10.0.0.0/8`);
    return { op: "cidr", value: text };
  }
  const cased = has("cased");
  let pattern = wildcardPattern(text);
  if (has("contains")) pattern = { like: `%${pattern.like}%`, wild: true };
  else if (has("startswith"))
    pattern = { like: `${pattern.like}%`, wild: true };
  else if (has("endswith")) pattern = { like: `%${pattern.like}`, wild: true };
  return pattern.wild
    ? { op: "like", pattern: pattern.like, cased }
    : { op: "eq", value: unescapeSigma(text), cased };
}

/** A Sigma value as a LIKE pattern: `*` and `?` are wildcards, `\*`, `\?`, `\\` literal. */
function wildcardPattern(text: string): { like: string; wild: boolean } {
  let like = "";
  let wild = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === "\\" && (next === "*" || next === "?" || next === "\\")) {
      like += likeLiteral(next);
      i++;
    } else if (c === "*") {
      like += "%";
      wild = true;
    } else if (c === "?") {
      like += "_";
      wild = true;
    } else like += likeLiteral(c);
  }
  return { like, wild };
}

const likeLiteral = (c: string): string =>
  c === "%" || c === "_" || c === "\\" ? `\\${c}` : c;
const unescapeSigma = (text: string): string =>
  text.replace(/\\([*?\\])/g, "$1");

function isCidr(text: string): boolean {
  const m = /^([0-9a-fA-F.:]+)\/(\d{1,3})$/.exec(text);
  if (!m) return false;
  const bits = Number(m[2]);
  return (m[1] as string).includes(":")
    ? bits <= 128
    : bits <= 32 && /^(\d{1,3}\.){3}\d{1,3}$/.test(m[1] as string);
}

const and = (parts: readonly Condition[]): Condition =>
  parts.length === 1 ? (parts[0] as Condition) : { kind: "and", parts };
const or = (parts: readonly Condition[]): Condition =>
  parts.length === 1 ? (parts[0] as Condition) : { kind: "or", parts };

/** The condition and its aggregation, split at the pipe. */
function splitPipe(condition: string): [string, string | undefined] {
  const i = condition.indexOf("|");
  return i < 0
    ? [condition, undefined]
    : [condition.slice(0, i), condition.slice(i + 1)];
}

/** and/or/not, parentheses, `1 of X`, `all of X` over the selections' SQL. */
class ConditionParser {
  readonly #tokens: string[];
  #i = 0;
  constructor(
    readonly at: Where,
    text: string,
    readonly selections: Readonly<Record<string, Condition>>,
  ) {
    this.#tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
    if (this.#tokens.length === 0)
      at.fail(["detection", "condition"], "the condition is empty");
  }
  #fail(what: string): never {
    this.at.fail(["detection", "condition"], `condition: ${what}`);
  }
  #peek(): string | undefined {
    return this.#tokens[this.#i];
  }
  #next(): string {
    const t = this.#tokens[this.#i++];
    if (t === undefined) this.#fail("ends too early");
    return t;
  }
  parse(): Condition {
    const sql = this.#or();
    if (this.#peek() !== undefined)
      this.#fail(`unexpected \`${this.#peek()}\``);
    return sql;
  }
  /** Whether the next token is the keyword `word` (any case); consumes it if so. */
  #take(word: string): boolean {
    if (this.#peek()?.toLowerCase() !== word) return false;
    this.#i++;
    return true;
  }
  /** One `part` or more, joined by the keyword `word`. */
  #joined(word: string, part: () => Condition): Condition[] {
    const parts = [part()];
    while (this.#take(word)) parts.push(part());
    return parts;
  }
  #or(): Condition {
    return or(this.#joined("or", () => this.#and()));
  }
  #and(): Condition {
    return and(this.#joined("and", () => this.#not()));
  }
  #not(): Condition {
    return this.#take("not")
      ? { kind: "not", part: this.#not() }
      : this.#primary();
  }
  #primary(): Condition {
    const t = this.#next();
    if (t === "(") {
      const inner = this.#or();
      if (this.#next() !== ")") this.#fail("a parenthesis is not closed");
      return inner;
    }
    const quantifier = t.toLowerCase();
    if (
      (quantifier === "1" || quantifier === "all" || quantifier === "any") &&
      this.#take("of")
    ) {
      if (quantifier === "any")
        this.#fail("`any of` is not Sigma: write `1 of`");
      const names = this.#matching(this.#next());
      return quantifier === "1" ? or(names) : and(names);
    }
    if (["and", "or", "of", ")", "near"].includes(quantifier))
      this.#fail(`\`${t}\` is not supported here`);
    const sel = this.selections[t];
    if (sel === undefined)
      this.#fail(`\`${t}\` names no selection of the detection`);
    return sel;
  }
  /** The SQL of the selections a pattern (`selection_*`, `them`) names. */
  #matching(pattern: string): Condition[] {
    const re =
      pattern === "them"
        ? /^[^_]/
        : new RegExp(
            `^${pattern
              .replace(/[.+^${}()|[\]\\]/g, "\\$&")
              .replace(/\*/g, ".*")
              .replace(/\?/g, ".")}$`,
          );
    const names = Object.keys(this.selections).filter((n) => re.test(n));
    if (names.length === 0) this.#fail(`\`${pattern}\` matches no selection`);
    return names.map((n) => this.selections[n] as Condition);
  }
}

const AGGREGATION =
  /^\s*count\(\s*([\w.]*)\s*\)\s*(?:by\s+([\w.]+(?:\s*,\s*[\w.]+)*)\s*)?(>=|<=|==|=|>|<)\s*(\d+)\s*$/i;

function aggregationOf(
  at: Where,
  text: string,
  timeframe: unknown,
): NonNullable<SigmaQuery["count"]> {
  const m = AGGREGATION.exec(text);
  if (!m)
    at.fail(
      ["detection", "condition"],
      `aggregation \`${text.trim()}\` is not supported: only \`count([field]) [by field[, field]] <op> N\``,
    );
  const field = (name: string): string =>
    mappedField(at, ["detection", "condition"], name).name;
  const by = (m[2] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(field);
  if (typeof timeframe !== "string")
    at.fail(
      ["detection", "condition"],
      "an aggregation needs a `timeframe` (e.g. 10m) under detection",
    );
  const tf = /^(\d+)([smhd])$/.exec(timeframe);
  if (!tf || Number(tf[1]) === 0)
    at.fail(
      ["detection", "timeframe"],
      `timeframe \`${timeframe}\` is not supported: use seconds, minutes, hours or days (30s, 10m, 1h, 1d)`,
    );
  const unit = { s: 1, m: 60, h: 3600, d: 86400 }[
    tf[2] as "s" | "m" | "h" | "d"
  ];
  const op = m[3] === "==" ? "=" : (m[3] as ">" | ">=" | "<" | "<=" | "=");
  return {
    by,
    distinct: m[1] ? field(m[1]) : undefined,
    op,
    threshold: Number(m[4]),
    timeframeSeconds: Number(tf[1]) * unit,
  };
}
