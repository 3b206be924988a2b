// A variable of the same name on several dashboards offers the same options: its query is one
// text, so a change made on one dashboard (a faster read, a rollup) cannot leave the others
// behind. The variables that list something else under the same name are named here, each with
// what it lists.
import { describe, expect, it } from "vitest";
import { loadDashboards, queryVariables } from "../../helpers/dashboards.js";

/** Variables that differ from their namesakes by design: dashboard uid, name, what they list. */
const OWN_QUERY: readonly { uid: string; name: string; why: string }[] = [
  {
    uid: "sessionhouse-ai-llm-activity",
    name: "user",
    why: "the users of LLM and MCP resources only",
  },
  {
    uid: "sessionhouse-policies-sensitive-data",
    name: "resource",
    why: "the resources that returned labelled data, from the data-label aggregation job",
  },
];

const variables = loadDashboards().flatMap(({ dashboard: d }) =>
  queryVariables(d).map((v) => ({ uid: d.uid, name: v.name, query: v.query })),
);

describe("variables shared by name", () => {
  it("have one query on every dashboard, but for those listed with what they list", () => {
    const own = (v: { uid: string; name: string }) =>
      OWN_QUERY.some((o) => o.uid === v.uid && o.name === v.name);
    const byName = new Map<string, Map<string, string[]>>();
    for (const v of variables.filter((x) => !own(x))) {
      const queries = byName.get(v.name) ?? new Map<string, string[]>();
      queries.set(v.query, [...(queries.get(v.query) ?? []), v.uid]);
      byName.set(v.name, queries);
    }
    const differing = [...byName]
      .filter(([, queries]) => queries.size > 1)
      .map(
        ([name, queries]) => `${name}: ${[...queries.values()].join(" / ")}`,
      );
    expect(differing).toEqual([]);
    // Every exception names a variable that exists, and one that does differ.
    for (const o of OWN_QUERY) {
      const mine = variables.find((v) => v.uid === o.uid && v.name === o.name);
      expect(mine, `${o.uid} ${o.name}`).toBeDefined();
      const others = variables.filter(
        (v) => v.name === o.name && !own(v) && v.query !== mine?.query,
      );
      expect(others.length, `${o.uid} ${o.name}`).toBeGreaterThan(0);
    }
  });
});
