// The answer contract over its input space: a Get answer is believed only for the object asked
// for; a page's members are an allowlist when its list is absent, and a cursor on an empty page
// is refused; a count that differs from the records is noted, never a reason to refuse; a
// numHits that is not a count is refused.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkListPage,
  checkSessionsPage,
  GET_ANSWERS,
  getAnswerProblem,
  LIST_MEMBERS,
  ListingCounts,
  logAggregationsProblem,
  type GetOperation,
} from "../../../src/api/answers.js";

const id = fc.string({ minLength: 1, maxLength: 20 });
const operation = fc.constantFrom(
  ...(Object.keys(GET_ANSWERS) as GetOperation[]),
);
/** Member names an answer may carry beside the expected ones. */
const extraMember = fc
  .string({ minLength: 1, maxLength: 12 })
  .filter((k) => !["listMetadata", "sessions", "__proto__"].includes(k));

describe("a Get answer", () => {
  it("is believed for the id asked for, or an object without an id, and never for another", () => {
    fc.assert(
      fc.property(operation, id, id, (op, asked, got) => {
        const { member } = GET_ANSWERS[op];
        expect(getAnswerProblem(op, { [member]: { id: asked } }, asked)).toBe(
          undefined,
        );
        expect(getAnswerProblem(op, { [member]: {} }, asked)).toBe(undefined);
        const other = getAnswerProblem(op, { [member]: { id: got } }, asked);
        if (got === asked) expect(other).toBe(undefined);
        else expect(other).toContain("not for");
      }),
      { seed: 21, numRuns: 300 },
    );
  });

  it("is refused when it holds no object, or an id that is not a string", () => {
    fc.assert(
      fc.property(
        operation,
        id,
        fc.oneof(fc.integer(), fc.boolean(), fc.constant([]), fc.constant({})),
        (op, asked, notAnId) => {
          const { member } = GET_ANSWERS[op];
          for (const answer of [null, [], "x", {}, { [member]: "x" }])
            expect(getAnswerProblem(op, answer, asked)).toBeDefined();
          expect(
            getAnswerProblem(op, { [member]: { id: notAnId } }, asked),
          ).toBeDefined();
        },
      ),
      { seed: 22, numRuns: 100 },
    );
  });
});

describe("a page", () => {
  it("with its list welcomes any other member; without it, holds only listMetadata", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...new Set(Object.values(LIST_MEMBERS))),
        fc.uniqueArray(extraMember, { maxLength: 3 }),
        fc.array(fc.constant({ id: "x" }), { minLength: 1, maxLength: 3 }),
        (member, extras, items) => {
          const others = Object.fromEntries(extras.map((k) => [k, 1]));
          const withList = checkListPage(
            { ...others, [member]: items },
            member,
          );
          expect(withList).toHaveProperty("items", items);
          const without = checkListPage({ ...others }, member);
          const unknown = extras.filter((k) => k !== member);
          if (unknown.length === 0) expect(without).toHaveProperty("items", []);
          else expect(without).toHaveProperty("problem");
          // The sessions page is read member by member; the same allowlist holds.
          expect("problem" in checkSessionsPage(others, 0, false)).toBe(
            extras.length > 0,
          );
          expect("problem" in checkSessionsPage(others, 2, true)).toBe(false);
        },
      ),
      { seed: 23, numRuns: 200 },
    );
  });

  it("refuses a next cursor on a page without records, and only then", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 10 }),
        fc.integer({ min: 0, max: 3 }),
        (cursor, records) => {
          const listMetadata = { nextCursor: cursor };
          const items = Array.from({ length: records }, () => ({}));
          const list = checkListPage({ links: items, listMetadata }, "links");
          const sessions = checkSessionsPage({ listMetadata }, records, true);
          expect("problem" in list).toBe(records === 0);
          expect("problem" in sessions).toBe(records === 0);
        },
      ),
      { seed: 24, numRuns: 100 },
    );
  });

  it("notes a count that differs from its records, never refuses it; an absent count says nothing", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            count: fc.bigInt({ min: 0n, max: 10n }),
            records: fc.integer({ min: 0, max: 10 }),
          }),
          { maxLength: 6 },
        ),
        (pages) => {
          const counts = new ListingCounts();
          const lines: unknown[] = [];
          for (const p of pages) {
            const differs = counts.page(
              { after: "", before: "", nextCursor: "", count: p.count },
              p.records,
            );
            expect(differs).toBe(
              p.count !== 0n && p.count !== BigInt(p.records),
            );
          }
          counts.report({ info: (fields: unknown) => lines.push(fields) }, {});
          const anyDiffers = pages.some(
            (p) => p.count !== 0n && p.count !== BigInt(p.records),
          );
          expect(lines.length).toBe(anyDiffers ? 1 : 0);
        },
      ),
      { seed: 25, numRuns: 200 },
    );
  });
});

describe("a ListLogAggregations answer", () => {
  it("holds its aggregations object and a numHits that is a count", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -5n, max: 2n ** 64n }), (n) => {
        const ok = n >= 0n && n < 2n ** 63n;
        const answers: unknown[] = [String(n)];
        if (n >= -5n && n <= BigInt(Number.MAX_SAFE_INTEGER))
          answers.push(Number(n));
        for (const numHits of answers)
          expect(
            logAggregationsProblem({ aggregations: {}, numHits }) === undefined,
            String(numHits),
          ).toBe(ok);
      }),
      { seed: 26, numRuns: 200 },
    );
    expect(logAggregationsProblem({ aggregations: {} })).toBe(undefined);
    for (const bad of [null, [], {}, { aggregations: [] }, { aggregations: 1 }])
      expect(logAggregationsProblem(bad)).toBeDefined();
  });
});
