// No function of src/ (the simulator aside) is longer than MAX_LINES lines, unless its header
// says why in one line starting with `// Whole:` (a hot-path state machine read best in one
// piece). A function is any function declaration, method, accessor, constructor, function
// expression or arrow function with a body; its length counts from its first line to its last.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const MAX_LINES = 80;
/** The simulator stands for a foreign service; its generators are not held to the limit. */
const EXEMPT_DIR = "src/simulator/";
const REASON = /^\/\/ Whole: \S/;

/** Every .ts file under src/ outside the exempt folder, as a path relative to the repository. */
function sourceFiles(): string[] {
  return readdirSync(join(ROOT, "src"), {
    recursive: true,
    withFileTypes: true,
  })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) =>
      relative(ROOT, join(e.parentPath, e.name)).replaceAll("\\", "/"),
    )
    .filter((f) => !f.startsWith(EXEMPT_DIR))
    .sort();
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

function isFunctionWithBody(node: ts.Node): node is FunctionNode {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isGetAccessorDeclaration(node) ||
      ts.isSetAccessorDeclaration(node) ||
      ts.isConstructorDeclaration(node) ||
      ts.isFunctionExpression(node) ||
      ts.isArrowFunction(node)) &&
    node.body !== undefined
  );
}

/** What a reader calls the function: its name, the variable or property it is assigned to. */
function nameOf(node: FunctionNode, sf: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return "constructor";
  if (node.name !== undefined) return node.name.getText(sf);
  const parent = node.parent;
  if (
    (ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)) &&
    parent.name !== undefined
  )
    return parent.name.getText(sf);
  return "(anonymous)";
}

/**
 * The nodes whose leading comments are the function's header: the function itself and, for a
 * function expression, what holds it (a variable statement, a property, an export).
 */
function headerNodes(node: FunctionNode): ts.Node[] {
  const nodes: ts.Node[] = [node];
  let n: ts.Node = node.parent;
  while (
    ts.isVariableDeclaration(n) ||
    ts.isVariableDeclarationList(n) ||
    ts.isVariableStatement(n) ||
    ts.isPropertyAssignment(n) ||
    ts.isPropertyDeclaration(n) ||
    ts.isExportAssignment(n)
  ) {
    nodes.push(n);
    n = n.parent;
  }
  return nodes;
}

function hasReason(node: FunctionNode, text: string): boolean {
  return headerNodes(node).some((n) =>
    (ts.getLeadingCommentRanges(text, n.getFullStart()) ?? []).some((c) =>
      REASON.test(text.slice(c.pos, c.end)),
    ),
  );
}

/** "file:line name (N lines)" for every function over MAX_LINES lines without a reason. */
function longFunctions(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunctionWithBody(node)) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_LINES && !hasReason(node, text))
        found.push(`${file}:${first + 1} ${nameOf(node, sf)} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe("functions of src/", () => {
  it(`are at most ${MAX_LINES} lines, or say why in a "// Whole:" header line`, () => {
    expect(sourceFiles().flatMap(longFunctions)).toEqual([]);
  });
});
