// The names the docs and comments give are names the code has: every function, constant or type
// the owner table of docs/architecture.md names in code (`checkMonth`, `ControlPlaneApi`,
// `withRuntime(config, fn)`) is in a file its row names, and every test file a comment of src/
// names exists. A path in the docs is checked by docs-files.test.ts; a name is checked here.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

/** A file's text, or every file's under a directory. */
function textOf(path: string): string {
  const full = join(ROOT, path);
  if (!existsSync(full)) return "";
  if (!statSync(full).isDirectory()) return readFileSync(full, "utf8");
  return readdirSync(full, { recursive: true, encoding: "utf8" })
    .map((f) => join(full, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f, "utf8"))
    .join("\n");
}

/** The rows of the owner tables: the lines of the tables after "## Who owns what". */
function ownerRows(page: string): string[] {
  const start = page.indexOf("\n## Who owns what");
  const next = page.indexOf("\n## ", start + 1);
  return page
    .slice(start, next === -1 ? undefined : next)
    .split("\n")
    .filter((l) => l.startsWith("| ") && !/^\| (concept|-)/.test(l));
}

/** Code spans that name code: camelCase, PascalCase with a capital inside, CONSTANT_CASE, or a call. */
const CODE_NAME =
  /^(?:[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Za-z_]\w*(?=\())/;

/** The code names a row gives (each part of `Class.member`), and the repository paths it names. */
function rowNames(row: string): { names: string[]; paths: string[] } {
  const names: string[] = [];
  const paths: string[] = [];
  for (const [, span = ""] of row.matchAll(/`([^`]+)`/g)) {
    if (
      /^(src|test|bench|deploy|dashboards|detections|migrations|scripts)\/|^Dockerfile$/.test(
        span,
      )
    )
      paths.push(span.replace(/[<{*].*$/, ""));
    else if (!/\s|[<{]/.test(span.replace(/\(.*\)$/, "")))
      for (const part of span.replace(/\(.*\)$/, "").split("."))
        if (CODE_NAME.test(part) || span.endsWith(")"))
          names.push(CODE_NAME.exec(part)?.[0] ?? part);
  }
  return { names, paths };
}

/** An environment variable is a name of the configuration, wherever its row points. */
const ENV_VAR = /^(SESSIONHOUSE|CLICKHOUSE)_/;

/** "name (row's files)" for each code name a row gives that none of its files holds. */
function missingNames(rows: readonly string[]): string[] {
  const missing: string[] = [];
  for (const row of rows) {
    const { names, paths } = rowNames(row);
    const text = paths.map(textOf).join("\n");
    for (const name of names) {
      const where = ENV_VAR.test(name) ? textOf("src/config") : text;
      if (!new RegExp(`\\b${name}\\b`).test(where))
        missing.push(`${name} (${paths.join(", ")})`);
    }
  }
  return missing;
}

describe("the owner table of docs/architecture.md", () => {
  const rows = ownerRows(textOf("docs/architecture.md"));

  it("reads the rows and the code names they give", () => {
    expect(rows.length).toBeGreaterThan(50);
    expect(
      rowNames(
        "| x | `src/cli/runtime.ts` | `withRuntime(config, fn)`, `SessionWriter.mark`, `Array`, `--by`, `status`, `TOP_ROWS`, `streams.<x>Schedule` |",
      ),
    ).toEqual({
      names: ["withRuntime", "SessionWriter", "TOP_ROWS"],
      paths: ["src/cli/runtime.ts"],
    });
  });

  it("names only functions, constants and types that are in the files of their row", () => {
    expect(
      missingNames(rows),
      "names the owner table gives that the files of their row do not hold: fix the row",
    ).toEqual([]);
  });

  it("names a name that is not in its row's files", () => {
    expect(
      missingNames([
        "| producing a report | `src/reports/produce.ts` | `produceReport`, `reportFrom` |",
      ]),
    ).toEqual(["produceReport (src/reports/produce.ts)"]);
  });
});

describe("the comments of src/", () => {
  it("name only test files that exist", () => {
    const missing: string[] = [];
    for (const file of readdirSync(join(ROOT, "src"), {
      recursive: true,
      encoding: "utf8",
    })) {
      if (!file.endsWith(".ts")) continue;
      const text = readFileSync(join(ROOT, "src", file), "utf8");
      for (const [path] of text.matchAll(/(?<![\w./-])test\/[\w./-]+\.ts\b/g))
        if (!existsSync(join(ROOT, path))) missing.push(`src/${file}: ${path}`);
    }
    expect(missing, "test paths named in src/ that do not exist").toEqual([]);
  });
});
