// The lines of a result as its blocks arrive: a block may end inside a line or inside a UTF-8
// character; the lines, read a block of them at a time or one by one, are the result's lines.
import { describe, expect, it } from "vitest";
import type { Warehouse } from "../../../src/warehouse/client.js";
import {
  resultLineBlocks,
  resultLines,
} from "../../../src/warehouse/result-stream.js";

/** A warehouse whose every query answers `text` cut into blocks at the byte offsets `cuts`. */
function answering(text: string, cuts: number[]): Warehouse {
  const bytes = Buffer.from(text, "utf8");
  const edges = [0, ...cuts, bytes.length];
  return {
    client: { command: () => Promise.resolve() },
    // eslint-disable-next-line @typescript-eslint/require-await
    async *queryBlocks() {
      for (let i = 0; i + 1 < edges.length; i++)
        yield new Uint8Array(bytes.subarray(edges[i], edges[i + 1]));
    },
  } as unknown as Warehouse;
}

const LINES = ['{"a":"é€😀"}', '{"a":""}', '{"a":"x\\ny"}', '{"a":"last"}'];
const TEXT = `${LINES.join("\n")}\n`;
const signal = new AbortController().signal;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("the lines of a result", () => {
  // Every cut of the bytes into two blocks, and one into a block a byte.
  const bytes = Buffer.byteLength(TEXT);
  const cutsList = [
    ...Array.from({ length: bytes - 1 }, (_, i) => [i + 1]),
    Array.from({ length: bytes - 1 }, (_, i) => i + 1),
  ];

  it("are the result's lines however its blocks are cut", async () => {
    for (const cuts of cutsList) {
      const w = answering(TEXT, cuts);
      expect(await collect(resultLines(w, "SELECT 1", signal))).toEqual(LINES);
      const blocks = await collect(resultLineBlocks(w, "SELECT 1", signal));
      expect(blocks.flat()).toEqual(LINES);
      expect(blocks.every((b) => b.length > 0)).toBe(true);
    }
  });

  it("keep a last line without its newline", async () => {
    const w = answering(LINES.join("\n"), [5]);
    expect(await collect(resultLines(w, "SELECT 1", signal))).toEqual(LINES);
  });
});
