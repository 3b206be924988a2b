// A strict reader of the Prometheus text exposition format (version 0.0.4), enough to prove that
// /metrics parses: every line is a comment, HELP, TYPE or a sample of a declared family, label
// values are properly escaped, values are numbers.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = '([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"';
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*,?)?\\})? (\\S+)(?: (-?\\d+))?$`,
);
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES = ["_bucket", "_sum", "_count", "_total", "_created"];

function parseValue(text: string, line: string): number {
  // Prometheus reads values with Go's ParseFloat, which takes NaN and Inf in any case
  // (prom-client writes "Nan" for a gauge without data).
  if (/^\+?inf(inity)?$/i.test(text)) return Infinity;
  if (/^-inf(inity)?$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const v = Number(text);
  if (
    !Number.isFinite(v) ||
    !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)
  )
    throw new Error(`bad value in: ${line}`);
  return v;
}

function familyOf(
  name: string,
  types: Map<string, string>,
): string | undefined {
  if (types.has(name)) return name;
  for (const s of SUFFIXES)
    if (name.endsWith(s) && types.has(name.slice(0, -s.length)))
      return name.slice(0, -s.length);
  return undefined;
}

export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const help = new Map<string, string>();
  const samples: Sample[] = [];
  if (!text.endsWith("\n"))
    throw new Error("the exposition must end with a newline");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name = "", rest = ""] = m;
      if (!new RegExp(`^${NAME}$`).test(name))
        throw new Error(`bad metric name in: ${line}`);
      if (kind === "TYPE") {
        if (!TYPES.has(rest)) throw new Error(`bad type in: ${line}`);
        if (types.has(name)) throw new Error(`TYPE given twice for ${name}`);
        types.set(name, rest);
      } else {
        help.set(name, rest);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const name = m[1] ?? "";
    if (!familyOf(name, types))
      throw new Error(`sample of an undeclared family: ${line}`);
    const labels: Record<string, string> = {};
    const labelText = m[2] ?? "";
    for (const lm of labelText.matchAll(new RegExp(LABEL, "g"))) {
      const key = lm[1] ?? "";
      if (key in labels)
        throw new Error(`label ${key} given twice in: ${line}`);
      labels[key] = (lm[2] ?? "").replace(/\\(["\\n])/g, (_s, c: string) =>
        c === "n" ? "\n" : c,
      );
    }
    const valueText = m[m.length - 2] ?? "";
    samples.push({ name, labels, value: parseValue(valueText, line) });
  }
  return { types, help, samples };
}

/** The value of one sample, matching every given label; undefined when absent. */
export function sampleValue(
  e: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const hit = e.samples.find(
    (s) =>
      s.name === name &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return hit?.value;
}

/** The sum of every sample of a name that matches the given labels. */
export function sumSamples(
  e: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number {
  return e.samples
    .filter(
      (s) =>
        s.name === name &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    )
    .reduce((a, s) => a + s.value, 0);
}
