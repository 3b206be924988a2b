// The shape of src/ as its static imports make it: no module imports itself back through others,
// and opening a warehouse loads no server code. A static import is one the module loader follows
// when the importing module loads: `import type` and `export type` are erased from the build and
// count for nothing, a dynamic `await import()` loads only when it runs.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");

/** Every .ts file under `dir`, as a path relative to the repository. */
function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), {
    recursive: true,
    withFileTypes: true,
  })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)))
    .sort();
}

/** The modules of src/ each module loads by its static imports and re-exports. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
    const targets: string[] = [];
    for (const statement of source.statements) {
      const specifier = staticSpecifier(statement);
      if (specifier === undefined || !specifier.startsWith(".")) continue;
      targets.push(join(dirname(file), specifier).replace(/\.js$/, ".ts"));
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The module an import or re-export loads when its module loads; undefined for a type-only one. */
function staticSpecifier(statement: ts.Statement): string | undefined {
  if (ts.isImportDeclaration(statement)) {
    if (statement.importClause?.isTypeOnly) return undefined;
    return (statement.moduleSpecifier as ts.StringLiteral).text;
  }
  if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
    if (statement.isTypeOnly) return undefined;
    return (statement.moduleSpecifier as ts.StringLiteral).text;
  }
  return undefined;
}

/** Each cycle of the graph, as the modules on it in import order, the first repeated at the end. */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components; a component of two or more modules, or a module
  // that imports itself, holds a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v) as number);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w))
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set<string>();
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size > 1 || (graph.get(v) ?? []).includes(v))
      found.push(cycleThrough(graph, component, v));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One cycle of a strongly connected component, from `start` back to it. */
function cycleThrough(
  graph: Map<string, string[]>,
  component: Set<string>,
  start: string,
): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift() as string;
    for (const w of graph.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = previous.get(u) as string)
          path.splice(1, 0, u);
        return [...path, start];
      }
      if (!previous.has(w) && w !== start) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Every module loaded when `entry` loads. */
function reachable(graph: Map<string, string[]>, entry: string): Set<string> {
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0)
    for (const w of graph.get(queue.shift() as string) ?? [])
      if (!seen.has(w)) {
        seen.add(w);
        queue.push(w);
      }
  return seen;
}

const graph = importGraph(sourceFiles("src"));

describe("the static imports of src/", () => {
  it("resolve to modules of src/", () => {
    const missing = [...graph].flatMap(([file, targets]) =>
      targets.filter((t) => !graph.has(t)).map((t) => `${file} → ${t}`),
    );
    expect(missing).toEqual([]);
  });

  it("form no cycle", () => {
    expect(cycles(graph).map((c) => c.join(" → "))).toEqual([]);
  });

  it("load no part of the HTTP front when the warehouse loads", () => {
    const loaded = reachable(graph, "src/warehouse/index.ts");
    expect(loaded.has("src/warehouse/client.ts")).toBe(true);
    expect([...loaded].filter((f) => f.startsWith("src/http-front/"))).toEqual(
      [],
    );
  });
});

describe("the command line's entry", () => {
  it("loads no command's code: --help and a mistake in the arguments open nothing heavy", () => {
    // What a command needs (the engine, the API client, the simulator, the report renderer,
    // the jobs) is imported when it runs (lazy in command-tree.ts).
    const heavy = [
      "src/api/",
      "src/http-front/",
      "src/ops/",
      "src/reports/",
      "src/scheduler/",
      "src/simulator/",
      "src/sources/",
      "src/warehouse/",
      "src/evidence/",
      "src/detections/",
      "src/cli/commands/",
    ];
    const loaded = [...reachable(graph, "src/cli/main.ts")];
    expect(loaded).toContain("src/cli/command-tree.ts");
    expect(
      loaded.filter((f) => heavy.some((folder) => f.startsWith(folder))),
    ).toEqual([]);
    expect(
      loaded.filter(
        (f) => f.startsWith("src/pipeline/") && f !== "src/pipeline/names.ts",
      ),
    ).toEqual([]);
  });
});

describe("the cycle finder", () => {
  it("names each cycle in import order, and a module that imports itself", () => {
    const g = new Map([
      ["a", ["b"]],
      ["b", ["c", "d"]],
      ["c", ["a"]],
      ["d", []],
      ["e", ["e"]],
    ]);
    expect(cycles(g)).toEqual([
      ["a", "b", "c", "a"],
      ["e", "e"],
    ]);
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });
});
