// The docs name files that exist: every path under src/, test/, migrations/, dashboards/,
// scripts/, bench/ or deploy/ that README.md or a page of docs/ names is in the repository, every
// relative link of those pages leads to a file, and every page of docs/ is linked from README.md.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/** The repository's root: the nearest directory above this file holding package.json. */
function repoRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir)
      throw new Error("no package.json above " + import.meta.dirname);
    dir = parent;
  }
  return dir;
}

const ROOT = repoRoot();

/**
 * Paths docs/architecture.md names for a layout being built on other branches at the same time.
 * They may be missing; once one exists this test fails so that it is taken off the list.
 */
const PENDING: readonly string[] = [];

/** README.md and every Markdown page under docs/, as paths relative to the root. */
function docPages(): string[] {
  const pages = ["README.md"];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".md")) pages.push(path);
    }
  };
  walk("docs");
  return pages;
}

const PATH =
  /(?<![\w./-])(?:src|test|migrations|dashboards|scripts|bench|deploy)\/[^\s`'"()[\]|,;:]*/g;

/**
 * The repository paths a page names. A placeholder (`<name>`, `{…}`, `*`, `…`) ends the path
 * where it starts: what is named is the directory before it.
 */
function namedPaths(text: string): string[] {
  const paths = new Set<string>();
  for (const [match] of text.matchAll(PATH)) {
    const cut = match.search(/[<{*…]/);
    const path = (cut === -1 ? match : match.slice(0, cut))
      .replace(/[.]+$/, "")
      .replace(/\/+$/, "");
    paths.add(path);
  }
  return [...paths];
}

interface Link {
  file: string;
  anchor: string | undefined;
}

/** A page's relative Markdown links and images: the file, and the #anchor when there is one. */
function relativeLinks(text: string): Link[] {
  const links: Link[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] ?? "";
    if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue;
    const [file = "", anchor] = target.split("#");
    links.push({ file, anchor });
  }
  return links;
}

/** The anchors of a page's headings, as GitHub makes them: lower case, spaces to hyphens. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  for (const m of text.matchAll(/^#{1,6} (.+)$/gm)) {
    const title = (m[1] ?? "").trim().toLowerCase();
    anchors.add(title.replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-"));
  }
  return anchors;
}

describe("the docs", () => {
  const pages = docPages();

  it("finds the pages and the paths they name", () => {
    expect(pages).toContain("docs/architecture.md");
    expect(
      namedPaths(
        "see `src/warehouse/sessions.ts`, test/cluster/golden/<mode>/ and bench/.",
      ),
    ).toEqual(["src/warehouse/sessions.ts", "test/cluster/golden", "bench"]);
    expect(namedPaths("http://host/src/x.ts and sub/test/y.ts")).toEqual([]);
  });

  it("name only files and directories that exist", () => {
    const missing: string[] = [];
    for (const page of pages) {
      for (const path of namedPaths(readFileSync(join(ROOT, page), "utf8"))) {
        if (!existsSync(join(ROOT, path)) && !PENDING.includes(path)) {
          missing.push(`${page}: ${path}`);
        }
      }
    }
    expect(
      missing,
      "paths named in the docs that do not exist: fix the page",
    ).toEqual([]);
  });

  it("keep no pending path that exists by now", () => {
    const arrived = PENDING.filter((path) => existsSync(join(ROOT, path)));
    expect(
      arrived,
      "these exist now: take them off PENDING in this test",
    ).toEqual([]);
  });

  it("link only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(ROOT, page), "utf8");
      for (const { file, anchor } of relativeLinks(text)) {
        const path = resolve(ROOT, dirname(page), file);
        if (!existsSync(path)) {
          broken.push(`${page}: ${file}`);
        } else if (
          anchor !== undefined &&
          !headingAnchors(readFileSync(path, "utf8")).has(anchor)
        ) {
          broken.push(`${page}: ${file}#${anchor}`);
        }
      }
    }
    expect(broken, "relative links to no file or heading").toEqual([]);
  });

  it("start README.md with the two commands for a fresh machine", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const first = /```sh\n([\s\S]*?)```/.exec(readme);
    expect(first?.[1]).toBe("npm install && npx sessionhouse demo\nnpm test\n");
    expect(readme.indexOf("```sh")).toBeLessThan(readme.indexOf("\n## "));
    const pkg = JSON.parse(
      readFileSync(join(ROOT, "package.json"), "utf8"),
    ) as {
      bin?: Record<string, string>;
      scripts?: Record<string, string>;
    };
    expect(pkg.bin?.["sessionhouse"]).toBeDefined();
    expect(pkg.scripts?.["test"]).toBeDefined();
  });

  it("are every one linked from README.md", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const linked = new Set(
      relativeLinks(readme).map(({ file }) =>
        relative(ROOT, resolve(ROOT, file)),
      ),
    );
    const unlinked = pages.filter(
      (page) => page !== "README.md" && !linked.has(page),
    );
    expect(unlinked, "docs pages README.md does not link to").toEqual([]);
  });
});
