import { describe, expect, it } from "vitest";
import { LineBlock, linesOf } from "../../src/warehouse/line-block.js";

describe("LineBlock", () => {
  it("holds the lines as UTF-8, one per line, growing past its first size", () => {
    const block = new LineBlock(16);
    const lines = [
      '["ses_1","Zoë","✓"]',
      "x".repeat(1000),
      '["emoji 🚀 and a \\"quote\\""]',
    ];
    for (const line of lines) block.push(line);
    expect(block.rows).toBe(3);
    const { body, starts, tails } = block.take();
    expect(body.toString("utf8")).toBe(lines.join("\n"));
    expect(starts).toEqual([0, 23, 1024]);
    expect(tails).toEqual([-1, -1, -1]);
    expect(
      lines.map((_, i) =>
        linesOf({ body, starts, tails }, i, i + 1).toString(),
      ),
    ).toEqual(lines);
    expect(body.length).toBe(Buffer.byteLength(lines.join("\n")));
  });

  it("starts over empty after take(), and the taken body stays intact", () => {
    const block = new LineBlock(8);
    block.push("first block");
    const first = block.take().body;
    expect(block.rows).toBe(0);
    expect(block.bytes).toBe(0);
    block.push("second");
    expect(first.toString()).toBe("first block");
    expect(block.take().body.toString()).toBe("second");
    const empty = block.take();
    expect(empty.body.length).toBe(0);
    expect(empty.starts).toEqual([]);
  });

  it("appends a last element to a JSON array without building the line: the same bytes", () => {
    const block = new LineBlock(4);
    block.pushArrayWith(
      Buffer.from('["a",1,["x"],'),
      '{"id":"ses_1","n":"Zoë"}',
    );
    block.pushArrayWith(Buffer.from('["b",'), '"text"');
    block.push("[3]");
    const taken = block.take();
    expect(taken.body.toString("utf8")).toBe(
      '["a",1,["x"],{"id":"ses_1","n":"Zoë"}]\n["b","text"]\n[3]',
    );
    // Where each line's last element starts: what a refused row's raw record is cut from.
    const tailOf = (i: number) =>
      taken.body.toString(
        "utf8",
        taken.tails[i],
        linesOf(taken, 0, i + 1).length - 1,
      );
    expect(tailOf(0)).toBe('{"id":"ses_1","n":"Zoë"}');
    expect(tailOf(1)).toBe('"text"');
    expect(taken.tails[2]).toBe(-1);
    expect(linesOf(taken, 1, 3).toString()).toBe('["b","text"]\n[3]');
  });

  it("writes the next block into a stored block's storage, only when handed back and only up to `keep`", () => {
    const block = new LineBlock(1 << 20, 1);
    block.push("first");
    const first = block.take();
    block.push("second");
    const second = block.take();
    // Nothing handed back: each block has storage of its own.
    expect(second.body.buffer).not.toBe(first.body.buffer);
    expect(first.body.toString()).toBe("first");
    block.reuse(first);
    block.reuse(second); // beyond keep: dropped
    block.take(); // the block being filled when `first` came back
    block.push("third");
    const third = block.take();
    expect(third.body.buffer).toBe(first.body.buffer);
    expect(third.body.toString()).toBe("third");
    block.push("fourth");
    expect(block.take().body.buffer).not.toBe(second.body.buffer);
    // A body this block did not give out is not taken as storage.
    const foreign = new LineBlock(1 << 20, 1);
    foreign.push("x");
    const other = foreign.take();
    block.reuse(other);
    block.push("fifth");
    expect(block.take().body.buffer).not.toBe(other.body.buffer);
  });

  it("keeps no storage when asked to keep none", () => {
    const block = new LineBlock(1 << 20);
    block.push("a");
    const a = block.take();
    block.reuse(a);
    block.push("b");
    block.take();
    block.push("c");
    expect(block.take().body.buffer).not.toBe(a.body.buffer);
    expect(a.body.toString()).toBe("a");
  });
});
