import { describe, expect, it } from "vitest";
import { LineBlock } from "../../src/warehouse/insert.js";

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
    const body = block.take();
    expect(body.toString("utf8")).toBe(lines.join("\n"));
    expect(body.length).toBe(Buffer.byteLength(lines.join("\n")));
  });

  it("starts over empty after take(), and the taken body stays intact", () => {
    const block = new LineBlock(8);
    block.push("first block");
    const first = block.take();
    expect(block.rows).toBe(0);
    expect(block.bytes).toBe(0);
    block.push("second");
    expect(first.toString()).toBe("first block");
    expect(block.take().toString()).toBe("second");
    expect(block.take().length).toBe(0);
  });

  it("appends a last element to a JSON array without building the line: the same bytes", () => {
    const block = new LineBlock(4);
    block.pushArrayWith('["a",1,["x"]]', '{"id":"ses_1","n":"Zoë"}');
    block.pushArrayWith('["b"]', '"text"');
    block.push("[3]");
    expect(block.take().toString("utf8")).toBe(
      '["a",1,["x"],{"id":"ses_1","n":"Zoë"}]\n["b","text"]\n[3]',
    );
  });
});
