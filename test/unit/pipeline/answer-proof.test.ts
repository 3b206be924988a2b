// What an answer proves: a stored object is taken as gone only when its parent's answer was read
// whole and did not return it, and no rejected record of that answer could be it (by its id, by
// the scope it names, or, without a readable id, any object of the parent). Against any mix of
// parents, whole and bad answers and rejected records, in memory.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Answer, Rejected } from "../../../src/pipeline/answer.js";
import { Reading } from "../../../src/pipeline/entity-streams.js";
import type { EntityRecord } from "../../../src/sources/directory.js";

const IDS = ["u1", "u2", "u3", "u4", "u5", "u6"];
const PARENTS = ["p1", "p2", "p3"];

const record = (id: string): EntityRecord => ({
  id,
  columns: {},
  contentHash: "",
  raw: "{}",
  deleted: false,
  changedAtMs: undefined,
});

const rejected = fc.oneof(
  fc.record({ kind: fc.constant("id" as const), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant("opaque" as const) }),
  fc.record({
    kind: fc.constant("scope" as const),
    value: fc.constantFrom("d1", "d2"),
  }),
);

const parentAnswer = fc.record({
  parent: fc.constantFrom(...PARENTS),
  whole: fc.boolean(),
  accepted: fc.subarray(IDS),
  rejected: fc.array(rejected, { maxLength: 3 }),
});

describe("an answer's proof", () => {
  it("proves a stored object gone only from a whole answer with nothing rejected that could be it", () => {
    fc.assert(
      fc.property(
        fc.array(parentAnswer, { maxLength: 5 }),
        fc.array(
          fc.record({
            id: fc.constantFrom(...IDS),
            parent: fc.constantFrom(...PARENTS),
            datastore: fc.constantFrom("d1", "d2", "d3"),
          }),
          { maxLength: 8 },
        ),
        (answers, stored) => {
          const read = new Reading("parent");
          for (const a of answers) {
            const letters: Rejected[] = a.rejected.map((r) => ({
              recordId: r.kind === "id" ? r.id : "",
              reason: "bad",
              raw: "{}",
              ...(r.kind === "scope"
                ? { scope: { column: "datastore", value: r.value } }
                : {}),
            }));
            const answer: Answer<EntityRecord> = {
              accepted: a.accepted.map(record),
              rejected: letters,
              proof: a.whole
                ? { kind: "whole" }
                : { kind: "bad", problem: "x" },
            };
            read.complete(a.parent, answer);
          }
          for (const row of stored) {
            const mine = answers.filter((a) => a.parent === row.parent);
            const couldBeIt = answers.some((a) =>
              a.rejected.some(
                (r) =>
                  (r.kind === "id" && r.id === row.id) ||
                  (r.kind === "scope" && r.value === row.datastore) ||
                  (r.kind === "opaque" && a.parent === row.parent),
              ),
            );
            const expected = mine.some((a) => a.whole) && !couldBeIt;
            expect(read.provesGone(row), JSON.stringify({ row, answers })).toBe(
              expected,
            );
          }
        },
      ),
      { seed: 13, numRuns: 300 },
    );
  });

  it("proves nothing gone from a parent whose answer was bad", () => {
    const read = new Reading(undefined);
    read.complete("", {
      accepted: [],
      rejected: [],
      proof: { kind: "bad", problem: "totals disagree" },
    });
    expect(read.provesGone({ id: "u1" })).toBe(false);
    expect(read.answered.size).toBe(0);
  });
});
