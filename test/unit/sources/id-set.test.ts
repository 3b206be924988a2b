import { describe, expect, it } from "vitest";
import { IdHashSet } from "../../../src/sources/id-set.js";

describe("IdHashSet", () => {
  it("remembers the tag each id first came with, through growth", () => {
    const set = new IdHashSet();
    const n = 200_000;
    // One assertion over all of them: an expect per id made this file take seconds.
    const wrong: number[] = [];
    for (let i = 0; i < n; i++)
      if (set.add(`ses_${i}`, 1 + (i % 7)) !== 1 + (i % 7)) wrong.push(i);
    expect(wrong).toEqual([]);
    expect(set.size).toBe(n);
    for (let i = 0; i < n; i += 997) {
      expect(set.add(`ses_${i}`, 99)).toBe(1 + (i % 7));
      expect(set.tagOf(`ses_${i}`)).toBe(1 + (i % 7));
    }
    expect(set.tagOf("ses_unknown")).toBe(0);
    expect(set.size).toBe(n);
    set.clear();
    expect(set.size).toBe(0);
    expect(set.tagOf("ses_1")).toBe(0);
  });

  it("tells apart ids that differ in one character or by their order", () => {
    const set = new IdHashSet();
    set.add("ab", 1);
    expect(set.add("ba", 2)).toBe(2);
    expect(set.add("ab ", 3)).toBe(3);
    expect(set.add("", 4)).toBe(4);
    expect(set.add("ab", 5)).toBe(1);
  });
});
