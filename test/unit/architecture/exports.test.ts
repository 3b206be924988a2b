// Every export of src/ has a user in another file: a name exported "in case" misleads a reader
// about what a module offers. Users are found with the compiler over tsconfig.json (src, tests
// and bench) plus the scripts and the bin entry, which import the build in dist/. An export
// nobody else imports either loses its `export` or, when its own file does not use it either, is
// deleted. Deliberate public surface is listed in ALLOWED below, each entry with its reason.
// A re-export (`export { x } from "./x.js"`) is not a use: a name an entry module (index.ts)
// re-exports must be used by a file outside the entry's folder, else the re-export is unused.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Exports that stay although no other file imports them, as "path#name" → why. A type named in
 * the signature of an export that is used needs no entry (see publicTypes).
 */
const ALLOWED: Readonly<Record<string, string>> = {};

/** A path relative to the repository, with forward slashes. */
const repoPath = (file: string): string =>
  relative(ROOT, file).split(sep).join("/");

function loadProgram(): ts.Program {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      },
    },
  );
  if (parsed === undefined) throw new Error("tsconfig.json did not parse");
  // Only the repository's own files: a user of an export imports it by a relative path, so the
  // packages' and the standard library's declarations (two thirds of the program, and most of
  // its time) are left out; what comes from them is read as unknown, which names no export.
  const options = { ...parsed.options, types: [] };
  const host = ts.createCompilerHost(options);
  host.resolveModuleNameLiterals = (literals, containing, _redirect, opts) =>
    literals.map((literal) =>
      literal.text.startsWith(".")
        ? ts.resolveModuleName(literal.text, containing, opts, host)
        : { resolvedModule: undefined },
    );
  return ts.createProgram({ rootNames: parsed.fileNames, options, host });
}

interface Exported {
  file: string;
  name: string;
  symbol: ts.Symbol;
  /** The declarations the export stands for (through an `export { x }` alias). */
  declarations: readonly ts.Declaration[];
}

/** Every export declared in a src/ file (re-exports of another file's name are that file's). */
function exportsOf(
  checker: ts.TypeChecker,
  sources: readonly ts.SourceFile[],
): Exported[] {
  const out: Exported[] = [];
  for (const sf of sources) {
    const file = repoPath(sf.fileName);
    if (!file.startsWith("src/")) continue;
    const moduleSymbol = checker.getSymbolAtLocation(sf);
    if (moduleSymbol === undefined) continue;
    for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
      const own = (symbol.declarations ?? []).filter(
        (d) => d.getSourceFile() === sf,
      );
      if (own.length === 0) continue;
      const target =
        symbol.flags & ts.SymbolFlags.Alias
          ? checker.getAliasedSymbol(symbol)
          : symbol;
      out.push({
        file,
        name: symbol.name,
        symbol,
        declarations: [...own, ...(target.declarations ?? [])],
      });
    }
  }
  return out;
}

/** Declaration → the files (other than its own) that name it, following import aliases. */
function usersByDeclaration(
  checker: ts.TypeChecker,
  sources: readonly ts.SourceFile[],
  names: ReadonlySet<string>,
): Map<ts.Declaration, Set<string>> {
  const users = new Map<ts.Declaration, Set<string>>();
  const mark = (symbol: ts.Symbol, file: string): void => {
    for (const d of symbol.declarations ?? []) {
      let set = users.get(d);
      if (set === undefined) users.set(d, (set = new Set()));
      set.add(file);
    }
  };
  for (const sf of sources) {
    const file = repoPath(sf.fileName);
    const visit = (node: ts.Node): void => {
      // The name in a re-export only passes the declaration on; its users are who import it.
      if (
        ts.isIdentifier(node) &&
        names.has(node.text) &&
        !ts.isExportSpecifier(node.parent)
      ) {
        let symbol = checker.getSymbolAtLocation(node);
        if (
          symbol !== undefined &&
          ts.isShorthandPropertyAssignment(node.parent)
        )
          symbol = checker.getShorthandAssignmentValueSymbol(node.parent);
        // An import is an alias of an alias (through an index's re-export) of the declaration.
        for (let hops = 0; symbol !== undefined && hops < 10; hops++) {
          mark(symbol, file);
          if (!(symbol.flags & ts.SymbolFlags.Alias)) break;
          symbol = checker.getImmediateAliasedSymbol(symbol);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return users;
}

/** "src/x.ts#name" for every name the scripts and the bin entry import from dist/. */
function buildImports(): Set<string> {
  const used = new Set<string>();
  const files = [
    ...readdirSync(join(ROOT, "bin")).map((f) => join("bin", f)),
    ...readdirSync(join(ROOT, "scripts")).map((f) => join("scripts", f)),
  ].filter((f) => /\.m?js$/.test(f));
  for (const rel of files) {
    const sf = ts.createSourceFile(
      rel,
      readFileSync(join(ROOT, rel), "utf8"),
      ts.ScriptTarget.Latest,
    );
    for (const statement of sf.statements) {
      if (
        !ts.isImportDeclaration(statement) ||
        !ts.isStringLiteral(statement.moduleSpecifier)
      )
        continue;
      const target = repoPath(
        resolve(ROOT, dirname(rel), statement.moduleSpecifier.text),
      );
      if (!target.startsWith("dist/")) continue;
      const source = target.replace(/^dist\//, "src/").replace(/\.js$/, ".ts");
      const bindings = statement.importClause?.namedBindings;
      if (bindings !== undefined && ts.isNamedImports(bindings))
        for (const e of bindings.elements)
          used.add(`${source}#${(e.propertyName ?? e.name).text}`);
    }
  }
  return used;
}

/**
 * Interfaces and type aliases named in the declaration (outside function bodies) of an export
 * of their own file that is kept: a caller reads them in a signature, so they stay exported.
 */
function publicTypes(
  checker: ts.TypeChecker,
  exported: readonly Exported[],
  kept: Set<Exported>,
): Set<Exported> {
  const isType = (e: Exported): boolean =>
    e.declarations.some(
      (d) => ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d),
    );
  const byDeclaration = new Map<ts.Declaration, Exported>();
  for (const e of exported)
    if (isType(e)) for (const d of e.declarations) byDeclaration.set(d, e);
  const found = new Set<Exported>();
  const queue = [...kept];
  while (queue.length > 0) {
    const e = queue.pop() as Exported;
    const visit = (node: ts.Node): void => {
      if (ts.isBlock(node)) return;
      if (ts.isIdentifier(node)) {
        const symbol = checker.getSymbolAtLocation(node);
        for (const d of symbol?.declarations ?? []) {
          const t = byDeclaration.get(d);
          if (t !== undefined && t.file === e.file && !kept.has(t)) {
            if (!found.has(t)) queue.push(t);
            found.add(t);
            kept.add(t);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    for (const d of e.declarations)
      if (d.getSourceFile().fileName.endsWith(e.file)) visit(d);
  }
  return found;
}

/**
 * Whether `file`, which names declaration `d` of export `e`, counts as a user of `e`: not the
 * file declaring it, and for an entry module's re-export, a file outside the entry's folder.
 */
function userOutside(e: Exported, d: ts.Declaration, file: string): boolean {
  if (file === e.file || file === repoPath(d.getSourceFile().fileName))
    return false;
  const reExport = e.declarations.some(
    (x) =>
      ts.isExportSpecifier(x) &&
      repoPath(x.getSourceFile().fileName) === e.file,
  );
  return (
    !reExport ||
    !e.file.endsWith("/index.ts") ||
    !file.startsWith(`${dirname(e.file)}/`)
  );
}

describe("exports of src/", () => {
  // Type-checking the program takes seconds (tens of them on a loaded machine).
  it("each have a user in another file, or a reason in ALLOWED", () => {
    const program = loadProgram();
    const checker = program.getTypeChecker();
    const sources = program
      .getSourceFiles()
      .filter(
        (sf) => !sf.isDeclarationFile && !sf.fileName.includes("node_modules"),
      );
    const exported = exportsOf(checker, sources);
    const names = new Set<string>();
    for (const e of exported) {
      names.add(e.name);
      for (const d of e.declarations) {
        const name = ts.getNameOfDeclaration(d);
        if (name !== undefined && ts.isIdentifier(name)) names.add(name.text);
      }
    }
    const users = usersByDeclaration(checker, sources, names);
    const fromBuild = buildImports();
    const key = (e: Exported): string => `${e.file}#${e.name}`;
    const usedElsewhere = (e: Exported): boolean =>
      fromBuild.has(key(e)) ||
      e.declarations.some((d) =>
        [...(users.get(d) ?? [])].some((f) => userOutside(e, d, f)),
      );
    const kept = new Set(
      exported.filter((e) => usedElsewhere(e) || key(e) in ALLOWED),
    );
    const stale = Object.keys(ALLOWED).filter(
      (k) => !exported.some((e) => key(e) === k && !usedElsewhere(e)),
    );
    expect(stale, "ALLOWED entries naming no unused export").toEqual([]);
    publicTypes(checker, exported, kept);
    const unused = exported
      .filter((e) => !kept.has(e))
      .map(key)
      .sort();
    expect(
      unused,
      "exports no other file imports: drop `export`, or delete what nothing uses",
    ).toEqual([]);
  }, 300_000);
});
