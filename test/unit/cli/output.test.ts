// What a person reads on a terminal: a table is a row a line with one rule under its head, a long
// listing says first how many items follow, and a count takes the right form of its noun.
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { counted, printListing, printTable } from "../../../src/cli/output.js";

function printed(rows: Record<string, unknown>[]): string[] {
  const out = new PassThrough();
  let text = "";
  out.on("data", (c: Buffer) => (text += c.toString("utf8")));
  printTable(rows, out);
  return text.trimEnd().split("\n");
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("terminal output", () => {
  it("draws a rule under the head only: a row a line", () => {
    const lines = printed(
      Array.from({ length: 5 }, (_, i) => ({ job: `job${i}`, rows: i })),
    );
    // Top border, head, rule under the head, five rows, bottom border.
    expect(lines).toHaveLength(9);
    expect(lines.filter((l) => l.startsWith("├"))).toHaveLength(1);
    expect(lines[3]).toMatch(/^│ job0 +│ 0 +│$/);
    expect(lines[7]).toMatch(/^│ job4 +│ 4 +│$/);
  });

  it("says how many items a long listing holds before the table, none for a short one", () => {
    const writes: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      writes.push(String(chunk));
      return true;
    });
    const form = {
      json: (n: number) => n,
      row: (n: number) => ({ n }),
      none: "none",
      noun: "window",
    };
    printListing(
      Array.from({ length: 1000 }, (_, i) => i),
      false,
      form,
    );
    expect(writes[0]).toBe("1000 windows:\n");
    writes.length = 0;
    printListing([1, 2], false, form);
    expect(writes[0]).toMatch(/^┌/);
  });

  it("counts in the right number", () => {
    expect(counted(1, "window")).toBe("1 window");
    expect(counted(0, "window")).toBe("0 windows");
    expect(counted(2, "session read")).toBe("2 session reads");
    expect(counted(3, "legal hold")).toBe("3 legal holds");
  });
});
