// A detection rule as a file: YAML checked by one zod schema, every problem named with the file,
// the rule and the line (docs/detections.md, "Rule format"). The rules shipped in detections/
// and those of `detections.dir` are read the same way.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  isMap,
  isScalar,
  LineCounter,
  parseDocument,
  type Document,
} from "yaml";
import { z } from "zod";
import { SessionhouseError } from "../util/errors.js";

/** A rule file, or a detection in one, that cannot be used: names the file, rule and line. */
export class DetectionRuleError extends SessionhouseError {
  readonly code: string = "DETECTION_RULE";
}

/** A rule whose SQL is not one read: refused before it runs, or by the engine (readonly = 1). */
export class RuleNotAReadError extends DetectionRuleError {
  override readonly code: string = "RULE_NOT_A_READ";
}

/** detections/ at the package root, from src/detections or dist/detections alike. */
export const SHIPPED_RULES_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "detections",
);

const SEVERITIES = ["info", "low", "medium", "high", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** ATT&CK technique ids: T1078, T1078.003. */
const ATTACK_ID = /^T\d{4}(\.\d{3})?$/;

const fixtureSchema = z.strictObject({
  name: z.string().min(1),
  /** True: the rule must fire on it; false: it must not. */
  fires: z.boolean(),
  /** Session records (the API's shape, merged over a complete default record) that arrive in the window. */
  sessions: z.array(z.record(z.string(), z.unknown())).default([]),
  /** Session records stored before the window: history the rule may read. */
  earlier: z.array(z.record(z.string(), z.unknown())).default([]),
  /** When the fixture's data arrives (default: a second after the last instant its sessions name). */
  arrivedAt: z.iso.datetime({ offset: true }).optional(),
  /** Rows of other tables (the directory, aggregations), by table, stored before the window. */
  tables: z
    .record(z.string(), z.array(z.record(z.string(), z.unknown())))
    .default({}),
});
export type Fixture = z.infer<typeof fixtureSchema>;

const ruleSchema = z
  .strictObject({
    id: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9_-]{0,35}$/,
        "id must be lower-case letters, digits, - or _ (at most 36: the Grafana alert uid is det- and the id)",
      ),
    title: z.string().min(1),
    description: z.string().min(1),
    severity: z.enum(SEVERITIES),
    /**
     * Whether the rule's hits page (compile to a Grafana alert); default: severity medium or
     * above (rulePages, src/detections/history.ts).
     */
    alert: z.boolean().optional(),
    attack: z
      .array(
        z
          .string()
          .regex(
            ATTACK_ID,
            "an ATT&CK technique id looks like T1078 or T1078.003",
          ),
      )
      .default([]),
    /** Compliance tags, e.g. soc2:CC6.1. */
    tags: z.array(z.string().min(1)).default([]),
    owner: z.string().min(1),
    /** Where the rule comes from when it is adapted (a public rule, its id, path and licence). */
    source: z.string().optional(),
    sql: z.string().min(1).optional(),
    /** A Sigma rule: inline, or the path of a file next to this one. */
    sigma: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())])
      .optional(),
    fixtures: z
      .array(fixtureSchema)
      .min(
        2,
        "a rule needs fixtures: at least one that fires and one that does not",
      ),
  })
  .refine((r) => (r.sql === undefined) !== (r.sigma === undefined), {
    message: "a rule has either `sql` or `sigma`, not both and not neither",
    path: ["sql"],
  })
  .refine(
    (r) => r.fixtures.some((x) => x.fires) && r.fixtures.some((x) => !x.fires),
    {
      message: "fixtures need at least one that fires and one that does not",
      path: ["fixtures"],
    },
  );

/** A parsed YAML document with what names a place in it. */
export interface YamlSource {
  readonly file: string;
  readonly doc: Document;
  readonly lines: LineCounter;
}

/** The 1-based line of the node at `path` (or of its closest parent that exists). */
export function lineOf(src: YamlSource, path: readonly PropertyKey[]): number {
  for (let n = path.length; n >= 0; n--) {
    const node = src.doc.getIn(
      path.slice(0, n).map(String).map(keyOrIndex),
      true,
    );
    const range =
      node && (isScalar(node) || isMap(node) || typeof node === "object")
        ? (node as { range?: [number, number, number] }).range
        : undefined;
    if (range) return src.lines.linePos(range[0]).line;
  }
  return 1;
}

const keyOrIndex = (k: string): string | number =>
  /^\d+$/.test(k) ? Number(k) : k;

export interface Rule {
  readonly id: string;
  readonly title: string;
  readonly description: string;
  readonly severity: Severity;
  /** `alert:` as the file gives it (rulePages decides). */
  readonly alert: boolean | undefined;
  readonly attack: readonly string[];
  readonly tags: readonly string[];
  readonly owner: string;
  readonly source: string | undefined;
  /** The rule's SQL and the line of its `sql:`, or its Sigma detection as the YAML it was read from. */
  readonly logic:
    | { kind: "sql"; sql: string; line: number }
    | { kind: "sigma"; src: YamlSource; path: readonly (string | number)[] };
  readonly fixtures: readonly Fixture[];
  /** The rule's file, and the line of each fixture (for messages). */
  readonly file: string;
  readonly fixtureLines: readonly number[];
}

/** Parses a YAML file; a syntax error names the file and line. */
function readYaml(file: string, text = readFileSync(file, "utf8")): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  const err = doc.errors[0];
  if (err)
    throw new DetectionRuleError(
      `${file}:${lines.linePos(err.pos[0]).line}: not valid YAML: ${err.message.split("\n")[0]}`,
      { hint: "fix the YAML syntax at that line" },
    );
  return { file, doc, lines };
}

/**
 * The Sigma rule a rule file names by path (`sigma: sigma/x.yml`, next to the file). Text of
 * several lines is a rule written as a block of text (`sigma: |`), which is refused: the rule
 * is given as a mapping or a path.
 */
function includedSigma(src: YamlSource, id: string, path: string): YamlSource {
  const where = `${src.file}:${lineOf(src, ["sigma"])}: rule ${id}: sigma`;
  if (/[\n\r]/.test(path))
    throw new DetectionRuleError(
      `${where}: a block of text (sigma: |) is neither a Sigma rule nor the path of one`,
      {
        hint: "give the rule as a mapping (the Sigma rule's keys indented under sigma:, without |) or a path (sigma: sigma/x.yml, next to the rule file)",
      },
    );
  const file = resolve(dirname(src.file), path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new DetectionRuleError(
      `${where}: cannot read the Sigma rule ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      {
        cause: err,
        hint: "give the rule as a mapping or a path (the path of a Sigma rule file, relative to the rule file)",
      },
    );
  }
  return readYaml(file, text);
}

/** One rule file, checked. */
function readRule(file: string): Rule {
  const src = readYaml(file);
  const value: unknown = src.doc.toJS();
  const parsed = ruleSchema.safeParse(value);
  const id =
    typeof value === "object" && value !== null && "id" in value
      ? String(value.id)
      : "(no id)";
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) =>
        `${file}:${lineOf(src, i.path)}: rule ${id}: ${i.path.length ? i.path.join(".") + ": " : ""}${i.message}`,
    );
    throw new DetectionRuleError(problems.join("\n"), {
      hint: "docs/detections.md describes the rule format",
    });
  }
  const r = parsed.data;
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    severity: r.severity,
    alert: r.alert,
    attack: r.attack,
    tags: r.tags,
    owner: r.owner,
    source: r.source,
    logic:
      r.sql !== undefined
        ? { kind: "sql", sql: r.sql, line: lineOf(src, ["sql"]) }
        : typeof r.sigma === "string"
          ? {
              kind: "sigma",
              src: includedSigma(src, r.id, r.sigma),
              path: [],
            }
          : { kind: "sigma", src, path: ["sigma"] },
    fixtures: r.fixtures,
    file,
    fixtureLines: r.fixtures.map((_x, i) => lineOf(src, ["fixtures", i])),
  };
}

/** The .yaml/.yml rule files of a directory (not those under a `sigma/` folder: included files). */
function ruleFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    throw new DetectionRuleError(
      `cannot read the detections directory ${dir}`,
      {
        cause: err,
        hint: "set detections.dir (SESSIONHOUSE_DETECTIONS_DIR) to a directory of rule files",
      },
    );
  }
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(dir, e.name))
    .sort();
}

/**
 * The rules of the given directories, in order; two rules with one id are refused. A path that
 * is a file is read as one rule.
 */
export function loadRules(dirs: readonly string[]): Rule[] {
  const rules: Rule[] = [];
  const seen = new Map<string, string>();
  for (const dir of dirs) {
    const files = statSync(dir, { throwIfNoEntry: false })?.isFile()
      ? [dir]
      : ruleFiles(dir);
    for (const file of files) {
      const rule = readRule(file);
      const other = seen.get(rule.id);
      if (other !== undefined)
        throw new DetectionRuleError(
          `${file}:1: rule ${rule.id}: the id is also the id of a rule in ${other}`,
          { hint: "give each rule its own id" },
        );
      seen.set(rule.id, file);
      rules.push(rule);
    }
  }
  return rules;
}

/** The shipped rules, then those of `detections.dir` when set. */
export function ruleDirs(configured: string | undefined): string[] {
  return configured === undefined
    ? [SHIPPED_RULES_DIR]
    : [SHIPPED_RULES_DIR, configured];
}
