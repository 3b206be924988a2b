// Every source that branches on the warehouse's kind (embedded or server) is run against a server
// by a test file scripts/server-suites.mjs names: in the server pass, or by a file that starts an
// HTTP front of its own. A new branch on the kind without such a file, or a named file that no
// longer exists, fails here.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SERVER_SUITES } from "../../../scripts/server-suites.mjs";

const ROOT = join(import.meta.dirname, "..", "..", "..");

/** A test of the warehouse's kind, or a warehouse built of one kind. */
const BRANCHES_ON_KIND =
  /\.kind\s*[!=]==\s*"(embedded|server)"|\bkind:\s*"(embedded|server)"/;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `${dir}/${f.split("\\").join("/")}`);
}

describe("the suites that prove the server path", () => {
  it("cover every source that branches on the warehouse's kind", () => {
    const covered = new Set(SERVER_SUITES.flatMap((s) => s.covers));
    const branching = sources("src").filter((f) =>
      BRANCHES_ON_KIND.test(readFileSync(join(ROOT, f), "utf8")),
    );
    expect(branching.length).toBeGreaterThan(5);
    expect(branching.filter((f) => !covered.has(f))).toEqual([]);
    // A source named as covered still branches on the kind (or the entry is stale).
    expect([...covered].filter((f) => !branching.includes(f))).toEqual([]);
  });

  it("name test files that exist, once each", () => {
    const names = SERVER_SUITES.map((s) => s.suite);
    expect(names.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("start a front of their own when they do not run in the server pass", () => {
    const own = SERVER_SUITES.filter((s) => s.pass === "own front");
    expect(
      own
        .map((s) => s.suite)
        .filter(
          (f) =>
            !/http-front|CLICKHOUSE_URL/.test(
              readFileSync(join(ROOT, f), "utf8"),
            ),
        ),
    ).toEqual([]);
  });
});
